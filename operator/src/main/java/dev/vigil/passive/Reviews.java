package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The {@link Reviewer}'s answers, asked on a worker pool and cached briefly: an allowing answer for
 * {@code allowTtlMs}, a denying one for {@code denyTtlMs}, a failed call not at all. Concurrent
 * requests with the same question share one call. Tokens are kept only as SHA-256 digests.
 *
 * <p>Bounded both ways: each cache keeps at most {@code maxCachedReviews} answers and drops the
 * least recently used one first (a flood of made-up tokens evicts old entries one by one instead of
 * clearing the cache whole), and at most {@code maxPendingReviews} calls wait or run at once; a
 * question past that fails at once with {@link Saturated} (the intake answers 503, Retry-After).
 */
final class Reviews {
  /** Too many review calls waiting: nothing was asked. */
  static final class Saturated extends RuntimeException {
    Saturated() {
      super("too many reviews in flight", null, false, false);
    }
  }

  /** The caller's source may not cause another TokenReview now: nothing was asked. */
  static final class Throttled extends RuntimeException {
    Throttled() {
      super("too many failed authentications from this source", null, false, false);
    }
  }

  private record Entry<T>(Future<T> answer, AtomicLong expiresAt) {}

  private final Reviewer reviewer;
  private final WorkerExecutor workers;
  private final IntakeLimits limits;
  private final LongSupplier clock;
  private final Map<String, Entry<Optional<Identity>>> tokens;
  private final Map<String, Entry<Boolean>> grants;
  private final AtomicInteger pending = new AtomicInteger();

  Reviews(Reviewer reviewer, WorkerExecutor workers, IntakeLimits limits, LongSupplier clock) {
    this.reviewer = reviewer;
    this.workers = workers;
    this.limits = limits;
    this.clock = clock;
    this.tokens = lru(limits.maxCachedReviews());
    this.grants = lru(limits.maxCachedReviews());
  }

  private static <T> Map<String, Entry<T>> lru(int max) {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Entry<T>> eldest) {
        return size() > max;
      }
    };
  }

  /**
   * The token's owner, or empty for a token that is not valid; fails when the review failed, and
   * with {@link Throttled} when the token is not cached and {@code mayAsk} refuses a TokenReview.
   */
  Future<Optional<Identity>> authenticate(String token, BooleanSupplier mayAsk) {
    return cached(
        tokens, digest(token), () -> reviewer.authenticate(token), Optional::isPresent, mayAsk);
  }

  /** Whether the caller may report for the pool; fails when the review failed. */
  Future<Boolean> mayReport(Identity caller, PoolKey pool) {
    return cached(
        grants,
        caller.authorizationKey() + '\u0000' + pool,
        () -> reviewer.mayReport(caller, pool),
        Boolean::booleanValue,
        () -> true);
  }

  /** Review calls waiting or running now. */
  int pending() {
    return pending.get();
  }

  int cached() {
    synchronized (this) {
      return tokens.size() + grants.size();
    }
  }

  private <T> Future<T> cached(
      Map<String, Entry<T>> cache,
      String key,
      Supplier<T> ask,
      Predicate<T> allows,
      BooleanSupplier mayAsk) {
    long now = clock.getAsLong();
    Entry<T> entry;
    synchronized (this) {
      Entry<T> hit = cache.get(key);
      if (hit != null && (!hit.answer().isComplete() || hit.expiresAt().get() > now)) {
        return hit.answer();
      }
      if (pending.incrementAndGet() > limits.maxPendingReviews()) {
        pending.decrementAndGet();
        return Future.failedFuture(new Saturated());
      }
      if (!mayAsk.getAsBoolean()) {
        pending.decrementAndGet();
        return Future.failedFuture(new Throttled());
      }
      AtomicLong expiresAt = new AtomicLong(Long.MAX_VALUE);
      Future<T> answer = workers.executeBlocking(ask::get, false);
      entry = new Entry<>(answer, expiresAt);
      cache.put(key, entry);
    }
    Entry<T> mine = entry;
    mine.answer()
        .onComplete(
            r -> {
              pending.decrementAndGet();
              if (r.succeeded()) {
                long ttl = allows.test(r.result()) ? limits.allowTtlMs() : limits.denyTtlMs();
                mine.expiresAt().set(clock.getAsLong() + ttl);
              } else {
                synchronized (this) {
                  cache.remove(key, mine);
                }
              }
            });
    return mine.answer();
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
