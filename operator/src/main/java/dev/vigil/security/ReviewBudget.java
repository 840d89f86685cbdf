package dev.vigil.security;

import io.vertx.core.WorkerExecutor;
import java.util.function.LongSupplier;

/**
 * How one port reviews its callers: how the {@link Reviews} keep and bound their answers, and each
 * source address's budget of failed authentications (TokenReviews of tokens not in the cache). The
 * one place a port's {@link Reviews} and their failed-authentication {@link TokenBuckets} are made:
 * the outcome intake (and its OTLP receiver), the voters' endpoint and the metrics port.
 *
 * @param failedAuthPerSecond TokenReviews of unknown tokens one source address may cause per second
 * @param failedAuthBurst such reviews one source address may cause at once after a quiet spell
 */
public record ReviewBudget(Reviews.Policy policy, double failedAuthPerSecond, int failedAuthBurst) {

  public ReviewBudget {
    if (!(failedAuthPerSecond > 0) || failedAuthBurst < 1) {
      throw new IllegalArgumentException("failed authentications: rate and burst must be positive");
    }
  }

  /** The port's reviews, asked on {@code workers}, with a fresh failed-authentication budget. */
  public Reviews reviews(Reviewer reviewer, WorkerExecutor workers, LongSupplier clock) {
    return new Reviews(reviewer, workers, policy, failedAuthentications(clock), clock);
  }

  /** Each source address's bucket of failed authentications, one per cached review at most. */
  public TokenBuckets failedAuthentications(LongSupplier clock) {
    return new TokenBuckets(failedAuthPerSecond, failedAuthBurst, policy.maxCached(), clock);
  }
}
