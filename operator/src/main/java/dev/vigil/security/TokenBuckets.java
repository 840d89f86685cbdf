package dev.vigil.security;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A token bucket per key: {@code perSecond} tokens refilled, {@code burst} at most. Used for the
 * intake's rate per identity (key: the user name) and for failed authentications per source address
 * on the outcome and metrics ports (key: the caller's IP; each TokenReview of a token not in the
 * cache takes one, an accepted token gives it back), so a flood of made-up tokens costs a bounded
 * number of TokenReviews.
 *
 * <p>Remembers at most {@code maxKeys} buckets, least recently used dropped first (a dropped key
 * starts again with a full bucket: the bound on memory wins over the bound on one key, and {@code
 * maxKeys} is far above the callers a cluster has). Time is passed in. Thread-safe.
 */
public final class TokenBuckets {
  private static final class Bucket {
    double tokens;
    long at;
  }

  private final double perMs;
  private final int burst;
  private final LongSupplier clock;
  private final Map<String, Bucket> buckets;

  public TokenBuckets(double perSecond, int burst, int maxKeys, LongSupplier clock) {
    if (!(perSecond > 0) || burst < 1 || maxKeys < 1) {
      throw new IllegalArgumentException("rate, burst and keys must be positive");
    }
    this.perMs = perSecond / 1000.0;
    this.burst = burst;
    this.clock = clock;
    this.buckets =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Bucket> eldest) {
            return size() > maxKeys;
          }
        };
  }

  /** Takes one token from the key's bucket; false (nothing taken) when it is empty. */
  public synchronized boolean tryAcquire(String key) {
    Bucket b = refilled(key);
    if (b.tokens < 1) {
      return false;
    }
    b.tokens -= 1;
    return true;
  }

  /** Gives one token back (the call it paid for turned out not to count), up to the burst. */
  public synchronized void refund(String key) {
    Bucket b = refilled(key);
    b.tokens = Math.min(burst, b.tokens + 1);
  }

  /** Whole seconds until the key's next token (for Retry-After), at least 1. */
  public synchronized long retryAfterSeconds(String key) {
    Bucket b = buckets.get(key);
    double missing = b == null ? 0 : 1 - b.tokens;
    return Math.max(1, (long) Math.ceil(missing / perMs / 1000.0));
  }

  /** Keys remembered now. */
  public synchronized int size() {
    return buckets.size();
  }

  private Bucket refilled(String key) {
    long now = clock.getAsLong();
    Bucket b = buckets.get(key);
    if (b == null) {
      b = new Bucket();
      b.tokens = burst;
      b.at = now;
      buckets.put(key, b);
    }
    b.tokens = Math.min(burst, b.tokens + Math.max(0, now - b.at) * perMs);
    b.at = now;
    return b;
  }
}
