package dev.vigil.passive;

/**
 * The intake's limits and cache lifetimes.
 *
 * @param maxBodyBytes a larger body is refused with 413 while it is read (or at once, when its
 *     Content-Length says so)
 * @param maxItems a batch with more outcomes is refused with 413
 * @param maxPoolsPerBatch a batch naming more distinct pools is refused with 400 (each pool costs a
 *     SubjectAccessReview when not cached)
 * @param requestTimeoutMs the whole body must arrive within this time of the request's start, else
 *     408
 * @param queuePerPool outcomes of one pool in flight to its runtime at once; more are rejected per
 *     item as {@code queue_full} (counted, and reported back)
 * @param maxAgeMs an outcome whose {@code at} is older is rejected as {@code stale}
 * @param maxSkewMs an outcome whose {@code at} is further in the future is rejected as {@code
 *     in_future}
 * @param allowTtlMs how long an allowing TokenReview or SubjectAccessReview is reused
 * @param denyTtlMs how long a denying one is reused
 * @param maxCachedReviews entries in each review cache; past it, expired entries go, then all
 */
public record IntakeLimits(
    int maxBodyBytes,
    int maxItems,
    int maxPoolsPerBatch,
    long requestTimeoutMs,
    int queuePerPool,
    long maxAgeMs,
    long maxSkewMs,
    long allowTtlMs,
    long denyTtlMs,
    int maxCachedReviews) {

  public IntakeLimits {
    if (maxBodyBytes < 1
        || maxItems < 1
        || maxPoolsPerBatch < 1
        || requestTimeoutMs < 1
        || queuePerPool < 1
        || maxCachedReviews < 1) {
      throw new IllegalArgumentException("intake limits must be positive");
    }
  }

  /** 4 MiB, 10,000 outcomes, 32 pools, 10 s, 20,000 queued per pool, 5 min old, 30 s / 5 s. */
  public static IntakeLimits defaults() {
    return new IntakeLimits(
        4 << 20, 10_000, 32, 10_000, 20_000, 300_000, 10_000, 30_000, 5_000, 10_000);
  }

  public IntakeLimits withMaxBodyBytes(int v) {
    return new IntakeLimits(
        v,
        maxItems,
        maxPoolsPerBatch,
        requestTimeoutMs,
        queuePerPool,
        maxAgeMs,
        maxSkewMs,
        allowTtlMs,
        denyTtlMs,
        maxCachedReviews);
  }

  public IntakeLimits withMaxItems(int v) {
    return new IntakeLimits(
        maxBodyBytes,
        v,
        maxPoolsPerBatch,
        requestTimeoutMs,
        queuePerPool,
        maxAgeMs,
        maxSkewMs,
        allowTtlMs,
        denyTtlMs,
        maxCachedReviews);
  }

  public IntakeLimits withRequestTimeoutMs(long v) {
    return new IntakeLimits(
        maxBodyBytes,
        maxItems,
        maxPoolsPerBatch,
        v,
        queuePerPool,
        maxAgeMs,
        maxSkewMs,
        allowTtlMs,
        denyTtlMs,
        maxCachedReviews);
  }

  public IntakeLimits withQueuePerPool(int v) {
    return new IntakeLimits(
        maxBodyBytes,
        maxItems,
        maxPoolsPerBatch,
        requestTimeoutMs,
        v,
        maxAgeMs,
        maxSkewMs,
        allowTtlMs,
        denyTtlMs,
        maxCachedReviews);
  }
}
