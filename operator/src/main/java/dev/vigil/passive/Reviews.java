package dev.vigil.passive;

import dev.vigil.ops.ReviewCache;
import dev.vigil.runtime.PoolKey;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The {@link Reviewer}'s answers, asked on a worker pool and cached briefly ({@link ReviewCache}):
 * an allowing answer for {@code allowTtlMs}, a denying one for {@code denyTtlMs}, a failed call not
 * at all. Concurrent requests with the same question share one call. Tokens are kept only as
 * SHA-256 digests.
 *
 * <p>Bounded both ways: each cache keeps at most {@code maxCachedReviews} answers, and at most
 * {@code maxPendingReviews} calls wait or run at once; a question past that fails at once with
 * {@link ReviewCache.Saturated} (the intake answers 503, Retry-After).
 */
final class Reviews {
  private final Reviewer reviewer;
  private final ReviewCache.Pending pending;
  private final ReviewCache<Optional<Identity>> tokens;
  private final ReviewCache<Boolean> grants;

  Reviews(Reviewer reviewer, WorkerExecutor workers, IntakeLimits limits, LongSupplier clock) {
    this.reviewer = reviewer;
    this.pending = new ReviewCache.Pending(limits.maxPendingReviews());
    this.tokens = cache(workers, limits, Optional::isPresent, clock);
    this.grants = cache(workers, limits, Boolean::booleanValue, clock);
  }

  private <T> ReviewCache<T> cache(
      WorkerExecutor workers, IntakeLimits limits, Predicate<T> allows, LongSupplier clock) {
    return new ReviewCache<>(
        workers,
        pending,
        limits.maxCachedReviews(),
        limits.allowTtlMs(),
        limits.denyTtlMs(),
        allows,
        clock);
  }

  /**
   * The token's owner, or empty for a token that is not valid; fails when the review failed, and
   * with {@link ReviewCache.Throttled} when the token is not cached and {@code mayAsk} refuses a
   * TokenReview.
   */
  Future<Optional<Identity>> authenticate(String token, BooleanSupplier mayAsk) {
    return tokens.get(digest(token), () -> reviewer.authenticate(token), mayAsk);
  }

  /** Whether the caller may report for the pool; fails when the review failed. */
  Future<Boolean> mayReport(Identity caller, PoolKey pool) {
    return grants.get(
        caller.authorizationKey() + '\u0000' + pool,
        () -> reviewer.mayReport(caller, pool),
        () -> true);
  }

  /** Review calls waiting or running now. */
  int pending() {
    return pending.now();
  }

  int cached() {
    return tokens.size() + grants.size();
  }

  static String digest(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing", e);
    }
  }
}
