package dev.vigil.runtime;

import dev.vigil.health.Backend;
import dev.vigil.health.DampingListener;
import dev.vigil.health.PoolHealth;
import java.util.function.LongSupplier;

/**
 * Tells the sink of flap damping's events (docs/design.md §2.1), heard in the middle of a core
 * event on the pool's context, and marks when the backend's shown state changed.
 */
final class DampingReports implements DampingListener {
  private final PoolKey key;
  private final TransitionSink sink;
  private final TrackedBackends backends;
  private final PoolHealth health;
  private final LongSupplier clock;

  DampingReports(
      PoolKey key,
      TransitionSink sink,
      TrackedBackends backends,
      PoolHealth health,
      LongSupplier clock) {
    this.key = key;
    this.sink = sink;
    this.backends = backends;
    this.health = health;
    this.clock = clock;
  }

  @Override
  public void damped(Backend b) {
    touch(b);
    sink.damped(key, b.id(), b.releaseAt(), TransitionReasons.damped(b, health.settings()));
  }

  @Override
  public void released(Backend b) {
    touch(b);
    sink.released(key, b.id(), TransitionReasons.released(health.settings()));
  }

  private void touch(Backend b) {
    TrackedBackend t = backends.byId(b.id());
    if (t != null) {
      t.since = clock.getAsLong();
    }
  }
}
