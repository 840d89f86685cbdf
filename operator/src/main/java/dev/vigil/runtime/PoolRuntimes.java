package dev.vigil.runtime;

import dev.vigil.health.HealthSettings;
import dev.vigil.probe.Probing;
import dev.vigil.probe.VertxTimers;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;

/**
 * The runtimes of every pool this replica runs, one per pool, each on its own Vert.x context (event
 * loops are shared round-robin). Reconcilers create, update and close them.
 */
public final class PoolRuntimes {
  /** Makes a pool's probe loops on the given context, reporting to the callback. */
  @FunctionalInterface
  public interface ProbingFactory extends BiFunction<Context, Probing.Results, Probing> {}

  private final Vertx vertx;
  private final ProbingFactory probing;
  private final TransitionSink sink;
  private final LongSupplier clock;
  private volatile Confirmer confirmer = Confirmer.ALONE;
  private final Map<PoolKey, PoolRuntime> runtimes = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.LongAdder closedApplied =
      new java.util.concurrent.atomic.LongAdder();
  private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

  public PoolRuntimes(
      Vertx vertx, ProbingFactory probing, TransitionSink sink, LongSupplier clock) {
    this.vertx = vertx;
    this.probing = probing;
    this.sink = sink;
    this.clock = clock;
  }

  /**
   * Who confirms the pools' Down verdicts (docs/design.md §8); {@link Confirmer#ALONE} until set.
   * Set it before the first pool starts: a runtime keeps the one it was made with.
   */
  public void confirmWith(Confirmer confirmer) {
    this.confirmer = confirmer;
  }

  /** Told whenever any pool's view changes. */
  public void addListener(PoolListener listener) {
    listeners.add(listener);
  }

  public Optional<PoolRuntime> get(PoolKey key) {
    return Optional.ofNullable(runtimes.get(key));
  }

  /**
   * The pool's runtime once it has its members ({@link PoolRuntime#started}): what outcomes are
   * applied to; empty while it has none or is being made.
   */
  public Optional<PoolRuntime> started(PoolKey key) {
    return get(key).filter(PoolRuntime::started);
  }

  /** True when the pool already has a runtime (false: the next {@link #ensure} makes one). */
  public boolean contains(PoolKey key) {
    return runtimes.containsKey(key);
  }

  /** The pool's runtime, made with these settings if it has none yet. */
  public PoolRuntime ensure(PoolKey key, HealthSettings settings) {
    return runtimes.computeIfAbsent(
        key,
        k -> {
          Context context = vertx.getOrCreateContext();
          return new PoolRuntime(
              k,
              new VertxTimers(context),
              settings,
              callback -> probing.apply(context, callback),
              this::changed,
              sink,
              confirmer,
              clock);
        });
  }

  private void changed(PoolKey key) {
    for (PoolListener l : listeners) {
      l.changed(key);
    }
  }

  /** Stops the pool's probes and forgets it (its applied outcomes stay counted). */
  public Future<Void> close(PoolKey key) {
    PoolRuntime r = runtimes.remove(key);
    if (r == null) {
      return Future.succeededFuture();
    }
    sink.poolClosed(key);
    // sealed on its context: nothing is applied after the count is taken
    return r.close().andThen(done -> closedApplied.add(r.outcomesApplied()));
  }

  /**
   * Outcomes the runtimes of this replica applied to a backend, since it started (closed runtimes'
   * too): what the passive intake's and the forwarded outcomes' counts are checked against. While a
   * runtime is closing its count is in neither sum for a moment: read it again once settled.
   */
  public long outcomesApplied() {
    long sum = closedApplied.sum();
    for (PoolRuntime r : runtimes.values()) {
      sum += r.outcomesApplied();
    }
    return sum;
  }

  public Future<Void> closeAll() {
    List<Future<Void>> closing = new ArrayList<>();
    for (PoolKey key : List.copyOf(runtimes.keySet())) {
      closing.add(close(key));
    }
    return Future.all(closing).mapEmpty();
  }

  /**
   * Backends whose last probe failed and backends probed, summed over this replica's pools (the
   * failing share's counts, docs/design.md §8): one read per pool, none per backend.
   */
  public FailingBackends failingBackends() {
    FailingBackends sum = FailingBackends.NONE;
    for (PoolRuntime r : runtimes.values()) {
      sum = sum.plus(r.failingBackends());
    }
    return sum;
  }

  /** Every runtime, for metrics and the policy aggregate. */
  public List<PoolRuntime> all() {
    return List.copyOf(runtimes.values());
  }
}
