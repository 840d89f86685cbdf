package dev.vigil.targets;

import java.util.List;

/**
 * What is known of one hostname target, and the rules that move it (pure, time passed in).
 *
 * <ul>
 *   <li>An answer replaces the addresses (sorted, at most {@value #MAX_ADDRESSES}) and is asked
 *       again after its TTL, bounded to {@value #MIN_TTL_MS} ms .. {@value #MAX_TTL_MS} ms: a TTL
 *       of 0 does not turn into a query storm, a TTL of a day does not hide a moved VM for a day.
 *   <li>A failed lookup (NXDOMAIN, SERVFAIL, timeout, no address) keeps the last answer for {@value
 *       #KEEP_LAST_MS} ms from the first failure in a row, and asks again every {@value #RETRY_MS}
 *       ms; after that the name has no addresses until it resolves again. A name that never
 *       resolved has none.
 * </ul>
 *
 * @param addresses the addresses published for the name now (kept or fresh)
 * @param refreshAt when to ask again (epoch ms); 0: never asked
 * @param failure why the latest lookup failed; null when it resolved (or none was made)
 * @param failingSince the first failed lookup of the current run (epoch ms); -1 when not failing
 */
public record ResolvedName(
    String hostname, List<String> addresses, long refreshAt, String failure, long failingSince) {
  public static final long MIN_TTL_MS = 5_000;
  public static final long MAX_TTL_MS = 300_000;
  public static final long KEEP_LAST_MS = 300_000;
  public static final long RETRY_MS = MIN_TTL_MS;
  public static final int MAX_ADDRESSES = 64;

  public ResolvedName {
    addresses = List.copyOf(addresses);
  }

  /** A name not asked yet: due at once, no addresses. */
  public static ResolvedName pending(String hostname) {
    return new ResolvedName(hostname, List.of(), 0, null, -1);
  }

  /** After an answer at {@code now}. */
  public ResolvedName answered(DnsAnswer answer, long now) {
    if (!answer.ok()) {
      return failed(answer.failure(), now);
    }
    List<String> sorted =
        answer.addresses().stream().distinct().sorted().limit(MAX_ADDRESSES).toList();
    return new ResolvedName(hostname, sorted, now + ttlMs(answer.ttlSeconds()), null, -1);
  }

  /** After a failed lookup at {@code now}: the last answer kept while the keep lasts. */
  public ResolvedName failed(String reason, long now) {
    long since = failing() ? failingSince : now;
    return new ResolvedName(hostname, addresses, now + RETRY_MS, reason, since).at(now);
  }

  /** As it stands at {@code now}: a kept answer past its keep is dropped. */
  public ResolvedName at(long now) {
    if (failing() && !addresses.isEmpty() && now >= keptUntil()) {
      return new ResolvedName(hostname, List.of(), refreshAt, failure, failingSince);
    }
    return this;
  }

  /** The TTL of an answer in ms, bounded to {@link #MIN_TTL_MS} .. {@link #MAX_TTL_MS}. */
  public static long ttlMs(long ttlSeconds) {
    return Math.max(MIN_TTL_MS, Math.min(MAX_TTL_MS, ttlSeconds * 1000));
  }

  public boolean failing() {
    return failure != null;
  }

  /** Until when a failing name keeps its last answer (epoch ms). */
  public long keptUntil() {
    return failingSince + KEEP_LAST_MS;
  }

  public boolean due(long now) {
    return now >= refreshAt;
  }

  /** The next moment this name needs attention: a lookup, or the end of a kept answer. */
  public long nextAt() {
    return failing() && !addresses.isEmpty() ? Math.min(refreshAt, keptUntil()) : refreshAt;
  }

  /** For status: why the name does not resolve, and what Vigil does about it; null when it does. */
  public String describe() {
    if (!failing()) {
      return null;
    }
    return "hostname "
        + hostname
        + " does not resolve ("
        + failure
        + ")"
        + (addresses.isEmpty()
            ? "; no address is published for it"
            : "; its last answer is kept until " + java.time.Instant.ofEpochMilli(keptUntil()));
  }
}
