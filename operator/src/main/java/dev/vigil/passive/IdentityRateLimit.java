package dev.vigil.passive;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A token bucket per authenticated identity (its user name): {@code perSecond} requests sustained,
 * {@code burst} at once. Remembers at most {@code maxIdentities} buckets, least recently used
 * dropped first (a dropped identity starts again with a full bucket, which is harmless: every
 * identity needed a valid token to get here). Time is passed in.
 */
final class IdentityRateLimit {
  private static final class Bucket {
    double tokens;
    long at;
  }

  private final double perMs;
  private final int burst;
  private final LongSupplier clock;
  private final Map<String, Bucket> buckets;

  IdentityRateLimit(double perSecond, int burst, int maxIdentities, LongSupplier clock) {
    this.perMs = perSecond / 1000.0;
    this.burst = burst;
    this.clock = clock;
    this.buckets =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Bucket> eldest) {
            return size() > maxIdentities;
          }
        };
  }

  /** Takes one request from the identity's bucket; false when it is empty. */
  synchronized boolean tryAcquire(String identity) {
    long now = clock.getAsLong();
    Bucket b = buckets.get(identity);
    if (b == null) {
      b = new Bucket();
      b.tokens = burst;
      b.at = now;
      buckets.put(identity, b);
    }
    b.tokens = Math.min(burst, b.tokens + Math.max(0, now - b.at) * perMs);
    b.at = now;
    if (b.tokens < 1) {
      return false;
    }
    b.tokens -= 1;
    return true;
  }

  /** Whole seconds until the identity's next request is allowed (for Retry-After), at least 1. */
  synchronized long retryAfterSeconds(String identity) {
    Bucket b = buckets.get(identity);
    double missing = b == null ? 0 : 1 - b.tokens;
    return Math.max(1, (long) Math.ceil(missing / perMs / 1000.0));
  }
}
