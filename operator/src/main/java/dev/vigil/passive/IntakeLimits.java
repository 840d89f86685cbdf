package dev.vigil.passive;

/**
 * The intake's limits and cache lifetimes: every resource a caller can make the intake spend has a
 * bound here (docs/design.md §4, wave 2).
 *
 * @param maxBodyBytes a larger body is refused with 413 while it is read (or at once, when its
 *     Content-Length says so)
 * @param maxItems a batch with more outcomes is refused with 413
 * @param maxPoolsPerBatch a batch naming more distinct pools is refused with 400 (each pool costs a
 *     SubjectAccessReview when not cached); with the pool in the URL a batch names one
 * @param requestTimeoutMs the whole request (reviews, body, apply) must finish within this time of
 *     its start: else 408 while the body is still arriving, 503 with Retry-After after it
 * @param queuePerPool outcomes of one pool in flight to its runtime at once; more are rejected per
 *     item as {@code queue_full} (counted, and reported back)
 * @param maxAgeMs an outcome whose {@code at} is older is rejected as {@code stale}
 * @param maxSkewMs an outcome whose {@code at} is further in the future is rejected as {@code
 *     in_future}
 * @param allowTtlMs how long an allowing TokenReview or SubjectAccessReview is reused
 * @param denyTtlMs how long a denying one is reused
 * @param maxCachedReviews entries in each review cache (least recently used go first) and
 *     identities the rate limit remembers
 * @param maxConnections open connections to the intake; a connection past it is closed at once
 * @param maxBytesInFlight body bytes all requests may hold at once (a request reserves its
 *     Content-Length, or {@code maxBodyBytes} when chunked, before its body is read); past it: 503
 *     with Retry-After
 * @param maxPendingReviews review calls queued or running at once; past it: 503 with Retry-After
 * @param requestsPerSecond requests one identity may make per second, sustained; past it: 429
 * @param requestBurst requests one identity may make at once after a quiet spell
 * @param failedAuthPerSecond TokenReviews of unknown tokens one source address may cause per
 *     second, sustained (a review that accepts the token costs nothing); past it: 429
 * @param failedAuthBurst such reviews one source address may cause at once after a quiet spell
 * @param maxConnectionsPerSource open connections from one remote address; one past it is closed at
 *     once (beside {@code maxConnections}, so one address cannot take them all)
 * @param headerTimeoutMs a connection that has not sent a whole request head within this time of
 *     its opening (or of its last answer) is closed, however many bytes trickle in
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
    int maxCachedReviews,
    int maxConnections,
    long maxBytesInFlight,
    int maxPendingReviews,
    double requestsPerSecond,
    int requestBurst,
    double failedAuthPerSecond,
    int failedAuthBurst,
    int maxConnectionsPerSource,
    long headerTimeoutMs) {

  public IntakeLimits {
    if (maxBodyBytes < 1
        || maxItems < 1
        || maxPoolsPerBatch < 1
        || requestTimeoutMs < 1
        || queuePerPool < 1
        || maxCachedReviews < 1
        || maxConnections < 1
        || maxBytesInFlight < maxBodyBytes
        || maxPendingReviews < 1
        || !(requestsPerSecond > 0)
        || requestBurst < 1
        || !(failedAuthPerSecond > 0)
        || failedAuthBurst < 1
        || maxConnectionsPerSource < 1
        || headerTimeoutMs < 1) {
      throw new IllegalArgumentException(
          "intake limits must be positive, and bytes in flight at least one body");
    }
  }

  /**
   * 4 MiB, 10,000 outcomes, 32 pools, 10 s, 20,000 queued per pool, 5 min old, 30 s / 5 s, 10,000
   * cached reviews, 256 connections, 32 MiB in flight, 64 pending reviews, 20 requests/s (burst 40)
   * per identity, 1 failed authentication/s (burst 10) per source address, 32 connections per
   * source address, 5 s for a request head.
   */
  public static IntakeLimits defaults() {
    return new IntakeLimits(
        4 << 20, 10_000, 32, 10_000, 20_000, 300_000, 10_000, 30_000, 5_000, 10_000, 256, 32 << 20,
        64, 20, 40, 1, 10, 32, 5_000);
  }

  /** How the intake's reviews are kept and bounded. */
  public dev.vigil.security.Reviews.Policy reviewPolicy() {
    return new dev.vigil.security.Reviews.Policy(
        maxCachedReviews, maxPendingReviews, allowTtlMs, denyTtlMs);
  }

  /** The intake's reviews and each source's budget of failed authentications. */
  public dev.vigil.security.ReviewBudget reviewBudget() {
    return new dev.vigil.security.ReviewBudget(
        reviewPolicy(), failedAuthPerSecond, failedAuthBurst);
  }

  /**
   * The connection gate's limits: the whole request (the intake's own deadline, then the 1 s drain
   * of an unread body) gets 2 s beyond {@code requestTimeoutMs} before its connection is closed.
   */
  public dev.vigil.security.ConnectionGate.Limits connectionLimits() {
    return new dev.vigil.security.ConnectionGate.Limits(
        maxConnections, maxConnectionsPerSource, headerTimeoutMs, requestTimeoutMs + 2_000);
  }

  public IntakeLimits withMaxConnectionsPerSource(int v) {
    return new Builder(this).set(b -> b.maxConnectionsPerSource = v);
  }

  public IntakeLimits withHeaderTimeoutMs(long v) {
    return new Builder(this).set(b -> b.headerTimeoutMs = v);
  }

  public IntakeLimits withMaxBodyBytes(int v) {
    return new Builder(this).set(b -> b.maxBodyBytes = v);
  }

  public IntakeLimits withMaxItems(int v) {
    return new Builder(this).set(b -> b.maxItems = v);
  }

  public IntakeLimits withRequestTimeoutMs(long v) {
    return new Builder(this).set(b -> b.requestTimeoutMs = v);
  }

  public IntakeLimits withQueuePerPool(int v) {
    return new Builder(this).set(b -> b.queuePerPool = v);
  }

  public IntakeLimits withMaxCachedReviews(int v) {
    return new Builder(this).set(b -> b.maxCachedReviews = v);
  }

  public IntakeLimits withMaxConnections(int v) {
    return new Builder(this).set(b -> b.maxConnections = v);
  }

  public IntakeLimits withMaxBytesInFlight(long v) {
    return new Builder(this).set(b -> b.maxBytesInFlight = v);
  }

  public IntakeLimits withMaxPendingReviews(int v) {
    return new Builder(this).set(b -> b.maxPendingReviews = v);
  }

  public IntakeLimits withRate(double perSecond, int burst) {
    return new Builder(this)
        .set(
            b -> {
              b.requestsPerSecond = perSecond;
              b.requestBurst = burst;
            });
  }

  public IntakeLimits withFailedAuthentications(double perSecond, int burst) {
    return new Builder(this)
        .set(
            b -> {
              b.failedAuthPerSecond = perSecond;
              b.failedAuthBurst = burst;
            });
  }

  /** A mutable copy, so each {@code with} names one field. */
  private static final class Builder {
    int maxBodyBytes;
    int maxItems;
    int maxPoolsPerBatch;
    long requestTimeoutMs;
    int queuePerPool;
    long maxAgeMs;
    long maxSkewMs;
    long allowTtlMs;
    long denyTtlMs;
    int maxCachedReviews;
    int maxConnections;
    long maxBytesInFlight;
    int maxPendingReviews;
    double requestsPerSecond;
    int requestBurst;
    double failedAuthPerSecond;
    int failedAuthBurst;
    int maxConnectionsPerSource;
    long headerTimeoutMs;

    Builder(IntakeLimits l) {
      maxBodyBytes = l.maxBodyBytes;
      maxItems = l.maxItems;
      maxPoolsPerBatch = l.maxPoolsPerBatch;
      requestTimeoutMs = l.requestTimeoutMs;
      queuePerPool = l.queuePerPool;
      maxAgeMs = l.maxAgeMs;
      maxSkewMs = l.maxSkewMs;
      allowTtlMs = l.allowTtlMs;
      denyTtlMs = l.denyTtlMs;
      maxCachedReviews = l.maxCachedReviews;
      maxConnections = l.maxConnections;
      maxBytesInFlight = l.maxBytesInFlight;
      maxPendingReviews = l.maxPendingReviews;
      requestsPerSecond = l.requestsPerSecond;
      requestBurst = l.requestBurst;
      failedAuthPerSecond = l.failedAuthPerSecond;
      failedAuthBurst = l.failedAuthBurst;
      maxConnectionsPerSource = l.maxConnectionsPerSource;
      headerTimeoutMs = l.headerTimeoutMs;
    }

    IntakeLimits set(java.util.function.Consumer<Builder> change) {
      change.accept(this);
      return new IntakeLimits(
          maxBodyBytes,
          maxItems,
          maxPoolsPerBatch,
          requestTimeoutMs,
          queuePerPool,
          maxAgeMs,
          maxSkewMs,
          allowTtlMs,
          denyTtlMs,
          maxCachedReviews,
          maxConnections,
          Math.max(maxBytesInFlight, maxBodyBytes),
          maxPendingReviews,
          requestsPerSecond,
          requestBurst,
          failedAuthPerSecond,
          failedAuthBurst,
          maxConnectionsPerSource,
          headerTimeoutMs);
    }
  }
}
