package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The {@link Reviewer}'s answers, asked on a worker pool and cached briefly: an allowing answer for
 * {@code allowTtlMs}, a denying one for {@code denyTtlMs}, a failed call not at all. Concurrent
 * requests with the same question share one call. Tokens are kept only as SHA-256 digests.
 */
final class Reviews {
  private record Entry<T>(Future<T> answer, AtomicLong expiresAt) {}

  private final Reviewer reviewer;
  private final WorkerExecutor workers;
  private final IntakeLimits limits;
  private final LongSupplier clock;
  private final Map<String, Entry<Optional<Identity>>> tokens = new ConcurrentHashMap<>();
  private final Map<String, Entry<Boolean>> grants = new ConcurrentHashMap<>();

  Reviews(Reviewer reviewer, WorkerExecutor workers, IntakeLimits limits, LongSupplier clock) {
    this.reviewer = reviewer;
    this.workers = workers;
    this.limits = limits;
    this.clock = clock;
  }

  /** The token's owner, or empty for a token that is not valid; fails when the review failed. */
  Future<Optional<Identity>> authenticate(String token) {
    return cached(tokens, digest(token), () -> reviewer.authenticate(token), Optional::isPresent);
  }

  /** Whether the caller may report for the pool; fails when the review failed. */
  Future<Boolean> mayReport(Identity caller, PoolKey pool) {
    return cached(
        grants,
        caller.authorizationKey() + '\u0000' + pool,
        () -> reviewer.mayReport(caller, pool),
        Boolean::booleanValue);
  }

  private <T> Future<T> cached(
      Map<String, Entry<T>> cache, String key, Supplier<T> ask, Predicate<T> allows) {
    long now = clock.getAsLong();
    Entry<T> hit = cache.get(key);
    if (hit != null && (!hit.answer().isComplete() || hit.expiresAt().get() > now)) {
      return hit.answer();
    }
    if (cache.size() >= limits.maxCachedReviews()) {
      cache.values().removeIf(e -> e.answer().isComplete() && e.expiresAt().get() <= now);
      if (cache.size() >= limits.maxCachedReviews()) {
        cache.clear();
      }
    }
    AtomicLong expiresAt = new AtomicLong(Long.MAX_VALUE);
    Future<T> answer = workers.executeBlocking(ask::get, false);
    Entry<T> entry = new Entry<>(answer, expiresAt);
    cache.put(key, entry);
    answer.onComplete(
        r -> {
          if (r.succeeded()) {
            long ttl = allows.test(r.result()) ? limits.allowTtlMs() : limits.denyTtlMs();
            expiresAt.set(clock.getAsLong() + ttl);
          } else {
            cache.remove(key, entry);
          }
        });
    return answer;
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
