package dev.vigil.ops;

import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.publish.PoolStatusAggregator;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolView;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Per-pool gauges read from the pools' immutable views, refreshed before each scrape. A pool that
 * is gone loses its series at the next refresh.
 *
 * <p>Cardinality: {@code vigil_backends} has 6 series per pool (one per state), {@code
 * vigil_pool_available}, {@code vigil_pool_damped} and {@code vigil_pool_panic} one each. {@code
 * vigil_backend_ejected} names the backend, so it lists only backends ejected right now, and at
 * most {@link #MAX_EJECTED_PER_POOL} per pool (the longest ejections first); the ejection cap keeps
 * the real number far lower. {@code vigil_pool_probe_lanes} is one series per pool, and so are the
 * counters {@code vigil_probe_starts_deferred_total} and {@code vigil_probe_starts_held_total},
 * which go with their pool.
 */
public final class PoolGauges {
  static final String BACKENDS = "vigil_backends";
  static final String AVAILABLE = "vigil_pool_available";
  static final String PANIC = "vigil_pool_panic";
  static final String DAMPED = "vigil_pool_damped";
  static final String EJECTED = "vigil_backend_ejected";
  static final String LANES = "vigil_pool_probe_lanes";
  static final String DEFERRED = "vigil_probe_starts_deferred";
  static final String HELD = "vigil_probe_starts_held";
  static final int MAX_EJECTED_PER_POOL = 20;

  private final Supplier<List<PoolRuntime>> pools;
  private final MultiGauge backends;
  private final MultiGauge available;
  private final MultiGauge panic;
  private final MultiGauge damped;
  private final MultiGauge ejected;
  private final MultiGauge lanes;
  private final MeterRegistry registry;

  /** Each pool's deferred- and held-starts counters, bound to the runtime they read. */
  private final Map<PoolKey, Bound> startCounters = new HashMap<>();

  private record Bound(PoolRuntime runtime, List<FunctionCounter> counters) {}

  /**
   * @param pools the runtimes to read, e.g. {@code PoolRuntimes::all}
   */
  public PoolGauges(Supplier<List<PoolRuntime>> pools, MeterRegistry registry) {
    this.pools = pools;
    this.registry = registry;
    this.backends =
        MultiGauge.builder(BACKENDS)
            .description(
                "Backends of a pool by the state its status shows"
                    + " (Unknown, Up, Down, Ejected, Damped, Draining)")
            .register(registry);
    this.available =
        MultiGauge.builder(AVAILABLE)
            .description("Backends of a pool that are Up, not ejected and not draining")
            .register(registry);
    this.panic =
        MultiGauge.builder(PANIC)
            .description("1 while the pool is in panic (every decided backend published)")
            .register(registry);
    this.damped =
        MultiGauge.builder(DAMPED)
            .description(
                "Backends of a pool held back by flap damping right now (whatever state they show)")
            .register(registry);
    this.ejected =
        MultiGauge.builder(EJECTED)
            .description(
                "1 for each backend ejected right now (at most "
                    + MAX_EJECTED_PER_POOL
                    + " per pool)")
            .register(registry);
    this.lanes =
        MultiGauge.builder(LANES)
            .description("Event loops the pool's probes run on, its own included (issue 15 lanes)")
            .register(registry);
  }

  /**
   * Binds the counters of the pool's deferred and held starts to its current runtime: a pool
   * created again under the same name gets new ones (their counts start from 0, as after a
   * restart).
   */
  private void bindStartCounters(PoolRuntime runtime, Tags pool) {
    Bound bound = startCounters.get(runtime.key());
    if (bound != null && bound.runtime() == runtime) {
      return;
    }
    if (bound != null) {
      bound.counters().forEach(registry::remove);
    }
    FunctionCounter deferredStarts =
        counter(
            DEFERRED,
            runtime,
            PoolRuntime::deferredStarts,
            "Probe starts that waited for the previous probe of the backend to end: rising"
                + " steadily, probes take as long as the interval (slow backends, or an"
                + " overloaded prober)",
            pool);
    FunctionCounter heldStarts =
        counter(
            HELD,
            runtime,
            PoolRuntime::heldStarts,
            "Probe starts that waited because too many probes of their event loop were"
                + " unanswered: the prober is short of CPU and slows down instead of timing out",
            pool);
    startCounters.put(runtime.key(), new Bound(runtime, List.of(deferredStarts, heldStarts)));
  }

  private FunctionCounter counter(
      String name,
      PoolRuntime runtime,
      ToDoubleFunction<PoolRuntime> count,
      String description,
      Tags pool) {
    return FunctionCounter.builder(name, runtime, count)
        .description(description)
        .tags(pool)
        .register(registry);
  }

  /** Reads every pool's view and replaces the rows; call before rendering a scrape. */
  public synchronized void refresh() {
    List<MultiGauge.Row<?>> stateRows = new ArrayList<>();
    List<MultiGauge.Row<?>> availableRows = new ArrayList<>();
    List<MultiGauge.Row<?>> panicRows = new ArrayList<>();
    List<MultiGauge.Row<?>> dampedRows = new ArrayList<>();
    List<MultiGauge.Row<?>> ejectedRows = new ArrayList<>();
    List<MultiGauge.Row<?>> laneRows = new ArrayList<>();
    Set<PoolKey> present = new HashSet<>();
    for (PoolRuntime runtime : pools.get()) {
      PoolKey key = runtime.key();
      PoolView view = runtime.view();
      Tags pool = Tags.of("namespace", key.namespace(), "pool", key.name());
      present.add(key);
      bindStartCounters(runtime, pool);
      laneRows.add(MultiGauge.Row.of(pool, runtime.probeLanes()));
      stateRows.addAll(stateRows(pool, view));
      availableRows.add(MultiGauge.Row.of(pool, view.snapshot().counts().available()));
      panicRows.add(MultiGauge.Row.of(pool, view.snapshot().panic() ? 1 : 0));
      dampedRows.add(MultiGauge.Row.of(pool, view.snapshot().counts().damped()));
      ejectedRows.addAll(ejectedRows(pool, view));
    }
    backends.register(stateRows, true);
    available.register(availableRows, true);
    panic.register(panicRows, true);
    damped.register(dampedRows, true);
    ejected.register(ejectedRows, true);
    lanes.register(laneRows, true);
    startCounters
        .entrySet()
        .removeIf(
            e -> {
              if (present.contains(e.getKey())) {
                return false;
              }
              e.getValue().counters().forEach(registry::remove);
              return true;
            });
  }

  /** A row per state, zeros included, so a state that empties reads 0 rather than vanishing. */
  private static List<MultiGauge.Row<?>> stateRows(Tags pool, PoolView view) {
    Map<BackendState, Integer> byState = new EnumMap<>(BackendState.class);
    for (BackendState s : BackendState.values()) {
      byState.put(s, 0);
    }
    for (BackendSnapshot b : view.backends()) {
      byState.merge(PoolStatusAggregator.stateOf(b.decision()), 1, Integer::sum);
    }
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byState.forEach(
        (s, n) ->
            rows.add(MultiGauge.Row.of(pool.and("state", s.name().toLowerCase(Locale.ROOT)), n)));
    return rows;
  }

  /** The ejected backends, those ejected longest first, at most {@code MAX_EJECTED_PER_POOL}. */
  private static List<MultiGauge.Row<?>> ejectedRows(Tags pool, PoolView view) {
    return view.backends().stream()
        .filter(BackendSnapshot::ejected)
        .sorted(Comparator.comparingLong(BackendSnapshot::ejectedUntil).reversed())
        .limit(MAX_EJECTED_PER_POOL)
        .<MultiGauge.Row<?>>map(b -> MultiGauge.Row.of(pool.and("backend", b.member().id()), 1))
        .toList();
  }
}
