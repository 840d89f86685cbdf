package dev.vigil.runtime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The reporters' batches that ejected a pool's backends, kept beside the ejection (docs/passive.md,
 * "Sending a batch again"): a keyed batch that ejects a backend leaves its key's digest on that
 * backend, status shows it in the backend's row ({@code ejectedBy}) in the same write as the
 * ejection, and the next owner restores it with the ejection. So a reporter's retry of that batch,
 * reaching the pool after a handoff or its owner's death, is known here and not applied again,
 * while the ejection it would repeat is known too; a batch whose effect did not reach status is
 * known nowhere and is applied once more, which is then its first lasting effect.
 *
 * <p>Bounded by backends, not by traffic: at most {@value #PER_BACKEND} keys per backend, each for
 * {@value #REMEMBER_MS} ms (the owners' memory of answers, {@code RouteLimits}). Runs on the pool's
 * context.
 */
final class EjectionKeys {
  /** How long a key is known after its ejection: as long as an owner remembers an answer. */
  static final long REMEMBER_MS = 120_000;

  /** Keys kept per backend, the newest. */
  static final int PER_BACKEND = 4;

  /** A digest on {@code backends} backends, the latest of them at {@code at}. */
  private static final class Seen {
    int backends;
    long at = Long.MIN_VALUE;
  }

  /** Every key on some backend, by digest: the union of the backends' lists. */
  private final Map<String, Seen> known = new HashMap<>();

  /** Whether a batch under the key slot {@code slot} ejected a backend within the window. */
  boolean knows(String slot, long now) {
    Seen s = known.get(BatchKey.digest(slot));
    return s != null && now - s.at < REMEMBER_MS;
  }

  /** The batch under {@code slot} ejected {@code t} now. */
  void ejected(TrackedBackend t, String slot, long now) {
    keep(t, List.of(new BatchKey(BatchKey.digest(slot), now)), now);
  }

  /** {@code t} joined with the keys a previous owner left in its status row. */
  void restored(TrackedBackend t, List<BatchKey> keys, long now) {
    if (keys != null && !keys.isEmpty()) {
      keep(t, keys, now);
    }
  }

  /** {@code t} left the pool: its keys go with it. */
  void left(TrackedBackend t) {
    for (BatchKey k : t.ejectedBy()) {
      Seen s = known.get(k.digest());
      if (s != null && --s.backends == 0) {
        known.remove(k.digest());
      }
    }
    t.ejectedBy(List.of());
  }

  /** The keys status shows for {@code t}: those still within the window. */
  static List<BatchKey> shown(TrackedBackend t, long now) {
    if (t.ejectedBy().isEmpty() || now - t.ejectedBy().get(0).at() < REMEMBER_MS) {
      return t.ejectedBy();
    }
    return t.ejectedBy().stream().filter(k -> now - k.at() < REMEMBER_MS).toList();
  }

  /** The backend's keys plus {@code added}, the expired and the oldest past the bound dropped. */
  private void keep(TrackedBackend t, List<BatchKey> added, long now) {
    List<BatchKey> all = new ArrayList<>(t.ejectedBy().size() + added.size());
    all.addAll(t.ejectedBy());
    for (BatchKey k : added) {
      if (t.ejectedBy().stream().noneMatch(o -> o.digest().equals(k.digest()))) {
        all.add(k);
      }
    }
    all.sort((a, b) -> Long.compare(a.at(), b.at()));
    int from = Math.max(0, all.size() - PER_BACKEND);
    List<BatchKey> kept = new ArrayList<>(PER_BACKEND);
    for (int i = 0; i < all.size(); i++) {
      BatchKey k = all.get(i);
      if (i >= from && now - k.at() < REMEMBER_MS) {
        kept.add(k);
      }
    }
    left(t);
    t.ejectedBy(List.copyOf(kept));
    for (BatchKey k : t.ejectedBy()) {
      Seen s = known.computeIfAbsent(k.digest(), d -> new Seen());
      s.backends++;
      s.at = Math.max(s.at, k.at());
    }
  }
}
