package dev.vigil.runtime;

import dev.vigil.health.Ejection;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.SweepReport;
import dev.vigil.probe.Timers;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * What runs on a pool's own timers, apart from probe results and outcomes: the periodic sweep, the
 * end of the next ejection and the release of the next damped backend (docs/design.md §2.1), each
 * one timer ({@link SweepTimer}, two {@link DeadlineTimer}s). The timed half of a {@link
 * PoolRuntime}; runs on the pool's context and tells the runtime through {@link
 * PassiveOutcomes.Shown} whether status or slices show a change.
 */
final class PoolTimers {
  private final PoolKey key;
  private final PoolHealth health;
  private final TrackedBackends backends;
  private final EjectionBook ejections;
  private final Confirmations confirmations;
  private final TransitionSink sink;
  private final LongSupplier clock;
  private final BooleanSupplier closed;
  private final PassiveOutcomes.Shown shown;
  private final SweepTimer sweep;
  private final DeadlineTimer ejectionEnd;
  private final DeadlineTimer release;

  PoolTimers(
      PoolKey key,
      Timers timers,
      PoolHealth health,
      TrackedBackends backends,
      EjectionBook ejections,
      Confirmations confirmations,
      TransitionSink sink,
      LongSupplier clock,
      BooleanSupplier closed,
      PassiveOutcomes.Shown shown) {
    this.key = key;
    this.health = health;
    this.backends = backends;
    this.ejections = ejections;
    this.confirmations = confirmations;
    this.sink = sink;
    this.clock = clock;
    this.closed = closed;
    this.shown = shown;
    this.sweep = new SweepTimer(timers, this::onSweep);
    this.ejectionEnd = new DeadlineTimer(timers, clock, this::onEjectionEnd);
    this.release = new DeadlineTimer(timers, clock, this::onRelease);
  }

  /** Whether the sweep runs (false until the first {@link #restartSweep}). */
  boolean sweeping() {
    return sweep.running();
  }

  void restartSweep(long intervalMs) {
    sweep.restart(intervalMs);
  }

  /** Arms the two deadline timers for the core's next ejection end and release. */
  void arm() {
    ejectionEnd.arm(health.nextEjectionEnd());
    release.arm(health.nextRelease());
  }

  void cancel() {
    sweep.cancel();
    ejectionEnd.cancel();
    release.cancel();
  }

  /** The periodic sweep (its timer re-arms itself first). */
  private void onSweep() {
    if (closed.getAsBoolean()) {
      return;
    }
    long now = clock.getAsLong();
    confirmations.refreshMode();
    boolean changed = ejections.expireDryRuns(now);
    changed |= report(health.sweepReport(now), now);
    shown.after(changed);
  }

  /**
   * Reports what one sweep did; true when status or slices show it: an ejection, a dry-run reason,
   * or a multiplier that decayed ({@code backends[].ejections}). A refusal shows nothing new.
   */
  private boolean report(SweepReport report, long now) {
    boolean changed = false;
    for (Ejection e : report.ejections()) {
      TrackedBackend t = backends.byId(e.backendId());
      if (t != null) {
        changed |= ejections.apply(t, EjectionNotice.of(e), now);
      }
    }
    return changed || report.decayed() > 0;
  }

  private void onEjectionEnd() {
    if (closed.getAsBoolean()) {
      return;
    }
    long now = clock.getAsLong();
    for (TrackedBackend t : backends.all()) {
      if (t.backend.ejected() && t.backend.ejectedUntil() <= now) {
        t.since = now;
        sink.unejected(key, t.id(), TransitionReasons.EJECTION_ENDED);
      }
    }
    health.expireEjections(now);
    shown.after(true);
  }

  /** The next damped backend's release is due (docs/design.md §2.1). */
  private void onRelease() {
    if (!closed.getAsBoolean()) {
      health.releaseDamped(clock.getAsLong());
      shown.after(true);
    }
  }
}
