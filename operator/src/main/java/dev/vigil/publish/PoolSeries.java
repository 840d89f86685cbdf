package dev.vigil.publish;

import dev.vigil.runtime.PoolKey;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every meter of a registry that belongs to one pool (tags {@code namespace} and {@code pool}),
 * indexed as it is registered, so that the pool's series go when its runtime closes (deleted, moved
 * to another shard, or this replica stopped leading). Without it, a tenant creating and deleting
 * pools in a loop grows the registry and every scrape without bound (issue 31 row 8). Whoever makes
 * a per-pool meter (transitions, passive intake, pool gauges) needs to do nothing more than tag it.
 *
 * <p>Only meters registered after construction are seen: make it before the first pool meter. A
 * meter made again after its pool closed (a report that was already in flight) stays until the pool
 * closes again; the pool's gauges drop their rows at the next scrape in any case.
 */
public final class PoolSeries {
  static final String NAMESPACE_TAG = "namespace";
  static final String POOL_TAG = "pool";

  private final MeterRegistry registry;
  private final Map<PoolKey, Set<Meter.Id>> byPool = new ConcurrentHashMap<>();

  public PoolSeries(MeterRegistry registry) {
    this.registry = registry;
    registry.config().onMeterAdded(this::added).onMeterRemoved(this::removed);
  }

  /** Removes every series of the pool from the registry. */
  public void remove(PoolKey pool) {
    Set<Meter.Id> ids = byPool.remove(pool);
    if (ids != null) {
      ids.forEach(registry::remove);
    }
  }

  /** How many series of the pool the registry holds (for tests and diagnostics). */
  public int count(PoolKey pool) {
    Set<Meter.Id> ids = byPool.get(pool);
    return ids == null ? 0 : ids.size();
  }

  private void added(Meter meter) {
    PoolKey pool = poolOf(meter.getId());
    if (pool != null) {
      byPool.computeIfAbsent(pool, k -> ConcurrentHashMap.newKeySet()).add(meter.getId());
    }
  }

  private void removed(Meter meter) {
    PoolKey pool = poolOf(meter.getId());
    if (pool == null) {
      return;
    }
    byPool.computeIfPresent(
        pool,
        (k, ids) -> {
          ids.remove(meter.getId());
          return ids.isEmpty() ? null : ids;
        });
  }

  private static PoolKey poolOf(Meter.Id id) {
    String namespace = id.getTag(NAMESPACE_TAG);
    String pool = id.getTag(POOL_TAG);
    return namespace == null || pool == null ? null : new PoolKey(namespace, pool);
  }
}
