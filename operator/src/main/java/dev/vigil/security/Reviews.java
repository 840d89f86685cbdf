package dev.vigil.security;

import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The {@link Reviewer}'s answers for one port (the outcome intake, the metrics port), asked on a
 * worker pool and cached briefly ({@link ReviewCache}): an allowing answer for {@link
 * Policy#allowTtlMs}, a denying one for {@link Policy#denyTtlMs}, a failed call not at all.
 * Concurrent requests with the same question share one call. Tokens are kept only as SHA-256
 * digests.
 *
 * <p>Bounded both ways: each cache keeps at most {@link Policy#maxCached} answers, and at most
 * {@link Policy#maxPending} calls wait or run at once; a question past that fails at once with
 * {@link ReviewCache.Saturated} (503, Retry-After). A token that is not cached costs a TokenReview,
 * paid from its source address's bucket of failed authentications and given back when the token is
 * valid (or the API server failed), so made-up tokens cost a bounded number of reviews; a source
 * whose bucket is spent gets {@link ReviewCache.Throttled} (429) without a review.
 */
public final class Reviews {
  /**
   * How one port's answers are kept and bounded.
   *
   * @param maxCached answers kept per cache (tokens, grants), least recently used dropped first
   * @param maxPending review calls waiting or running at once
   * @param allowTtlMs how long a valid token or a granted permission is kept
   * @param denyTtlMs how long a token that is not valid or a denied permission is kept
   */
  public record Policy(int maxCached, int maxPending, long allowTtlMs, long denyTtlMs) {}

  private final Reviewer reviewer;
  private final TokenBuckets failedAuthentications;
  private final ReviewCache<Optional<Identity>> tokens;
  private final ReviewCache<Boolean> grants;

  /**
   * @param failedAuthentications the buckets, per source address, that TokenReviews of tokens not
   *     in the cache are paid from
   */
  public Reviews(
      Reviewer reviewer,
      WorkerExecutor workers,
      Policy policy,
      TokenBuckets failedAuthentications,
      LongSupplier clock) {
    this.reviewer = reviewer;
    this.failedAuthentications = failedAuthentications;
    ReviewCache.Pending pending = new ReviewCache.Pending(policy.maxPending());
    this.tokens = cache(workers, pending, policy, Optional::isPresent, clock);
    this.grants = cache(workers, pending, policy, Boolean::booleanValue, clock);
  }

  private static <T> ReviewCache<T> cache(
      WorkerExecutor workers,
      ReviewCache.Pending pending,
      Policy policy,
      Predicate<T> allows,
      LongSupplier clock) {
    return new ReviewCache<>(
        workers,
        pending,
        policy.maxCached(),
        policy.allowTtlMs(),
        policy.denyTtlMs(),
        allows,
        clock);
  }

  /**
   * The token's owner, or empty for a token that is not valid; fails when the review failed, with
   * {@link ReviewCache.Saturated} when too many reviews wait, and with {@link
   * ReviewCache.Throttled} when the token is not cached and {@code source} may not cause another
   * TokenReview now.
   */
  public Future<Optional<Identity>> authenticate(String token, String source) {
    boolean[] charged = {false};
    return tokens
        .get(
            digest(token),
            () -> reviewer.authenticate(token),
            () -> charged[0] = failedAuthentications.tryAcquire(source))
        .andThen(
            answer -> {
              if (charged[0] && (answer.failed() || answer.result().isPresent())) {
                failedAuthentications.refund(source); // the token was valid, or the API failed
              }
            });
  }

  /**
   * The caller of a request that may carry a client certificate and a token: a verified
   * certificate's identity as it is (the admin's CA vouches for it: no TokenReview, and the token,
   * if any, is not looked at, as the API server tries certificates first), else the token's owner
   * as {@link #authenticate(String, String)} finds it; empty with neither.
   */
  public Future<Optional<Identity>> authenticate(
      ClientCertificates.Verdict certificate, String token, String source) {
    if (certificate.verified()) {
      return Future.succeededFuture(Optional.of(certificate.identity()));
    }
    return token == null ? Future.succeededFuture(Optional.empty()) : authenticate(token, source);
  }

  /** Whether the caller may do what {@code permission} names; fails when the review failed. */
  public Future<Boolean> allows(Identity caller, Permission permission) {
    return grants.get(
        caller.authorizationKey() + '\u0000' + permission.key(),
        () -> reviewer.allows(caller, permission),
        () -> true);
  }

  /** When {@code source} may cause a TokenReview again, in whole seconds (for Retry-After). */
  public long retryAfterSeconds(String source) {
    return failedAuthentications.retryAfterSeconds(source);
  }

  private static String digest(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing", e);
    }
  }
}
