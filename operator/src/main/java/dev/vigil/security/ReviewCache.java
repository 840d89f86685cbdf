package dev.vigil.security;

import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Answers of a blocking review (TokenReview, SubjectAccessReview), asked on a worker pool and
 * cached briefly: an allowing answer for {@code allowTtlMs}, a denying one for {@code denyTtlMs}, a
 * failed call not at all. Single-flight: concurrent questions with the same key share one call.
 *
 * <p>Bounded both ways: at most {@code maxEntries} answers (least recently used go first, so a
 * flood of made-up keys evicts old entries one by one instead of clearing the cache), and at most
 * {@link Pending#max} calls waiting or running at once across the caches that share a {@link
 * Pending}; a question past that fails at once with {@link Saturated}. Used by the outcome intake
 * and the metrics port alike.
 */
public final class ReviewCache<T> {
  /** Too many review calls waiting: nothing was asked. */
  public static final class Saturated extends RuntimeException {
    Saturated() {
      super("too many reviews in flight", null, false, false);
    }
  }

  /** The caller may not cause another review now: nothing was asked. */
  public static final class Throttled extends RuntimeException {
    Throttled() {
      super("too many failed authentications from this source", null, false, false);
    }
  }

  /** Review calls waiting or running, shared by the caches that ask one API server. */
  public static final class Pending {
    private final int max;
    private final AtomicInteger now = new AtomicInteger();

    public Pending(int max) {
      if (max < 1) {
        throw new IllegalArgumentException("pending reviews must be positive, got " + max);
      }
      this.max = max;
    }

    public int now() {
      return now.get();
    }
  }

  private record Entry<T>(Future<T> answer, AtomicLong expiresAt) {}

  private final WorkerExecutor workers;
  private final Pending pending;
  private final long allowTtlMs;
  private final long denyTtlMs;
  private final Predicate<T> allows;
  private final LongSupplier clock;
  private final Map<String, Entry<T>> entries;

  public ReviewCache(
      WorkerExecutor workers,
      Pending pending,
      int maxEntries,
      long allowTtlMs,
      long denyTtlMs,
      Predicate<T> allows,
      LongSupplier clock) {
    this.workers = workers;
    this.pending = pending;
    this.allowTtlMs = allowTtlMs;
    this.denyTtlMs = denyTtlMs;
    this.allows = allows;
    this.clock = clock;
    this.entries =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Entry<T>> eldest) {
            return size() > maxEntries;
          }
        };
  }

  /**
   * The cached or in-flight answer for {@code key}, else a new call of {@code ask} when {@code
   * mayAsk} allows it (else {@link Throttled}) and the pending bound does (else {@link Saturated}).
   */
  public Future<T> get(String key, Supplier<T> ask, BooleanSupplier mayAsk) {
    long now = clock.getAsLong();
    Entry<T> mine;
    synchronized (this) {
      Entry<T> hit = entries.get(key);
      if (hit != null && (!hit.answer().isComplete() || hit.expiresAt().get() > now)) {
        return hit.answer();
      }
      if (pending.now.incrementAndGet() > pending.max) {
        pending.now.decrementAndGet();
        return Future.failedFuture(new Saturated());
      }
      if (!mayAsk.getAsBoolean()) {
        pending.now.decrementAndGet();
        return Future.failedFuture(new Throttled());
      }
      mine = new Entry<>(workers.executeBlocking(ask::get, false), new AtomicLong(Long.MAX_VALUE));
      entries.put(key, mine);
    }
    mine.answer()
        .onComplete(
            r -> {
              pending.now.decrementAndGet();
              if (r.succeeded()) {
                long ttl = allows.test(r.result()) ? allowTtlMs : denyTtlMs;
                mine.expiresAt().set(clock.getAsLong() + ttl);
              } else {
                synchronized (this) {
                  entries.remove(key, mine);
                }
              }
            });
    return mine.answer();
  }

  /** Answers cached or in flight now. */
  public synchronized int size() {
    return entries.size();
  }
}
