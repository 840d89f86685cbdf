package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded count of outcomes in flight to each pool's runtime, so that one pool's reporters cannot
 * pile up unbounded work (or memory) in front of everyone else's.
 */
final class PoolQueues {
  private final int capacity;
  private final Map<PoolKey, AtomicInteger> pending = new ConcurrentHashMap<>();

  PoolQueues(int capacity) {
    this.capacity = capacity;
  }

  /** Takes up to {@code n} places in the pool's queue; returns how many it got. */
  int reserve(PoolKey pool, int n) {
    AtomicInteger q = pending.computeIfAbsent(pool, k -> new AtomicInteger());
    while (true) {
      int now = q.get();
      int granted = Math.min(n, capacity - now);
      if (granted <= 0) {
        return 0;
      }
      if (q.compareAndSet(now, now + granted)) {
        return granted;
      }
    }
  }

  void release(PoolKey pool, int n) {
    if (n > 0) {
      pending.get(pool).addAndGet(-n);
    }
  }

  int pending(PoolKey pool) {
    AtomicInteger q = pending.get(pool);
    return q == null ? 0 : q.get();
  }
}
