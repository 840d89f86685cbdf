package dev.vigil.runtime;

import dev.vigil.probe.Timers;

/**
 * The pool's periodic sweep (decay, statistical rules, dry-run expiry): re-arms itself before it
 * runs the sweep, so a failing sweep never stops the next one. Runs on the pool's context.
 */
final class SweepTimer {
  private final Timers timers;
  private final Runnable sweep;
  private long timer = -1;
  private long intervalMs;

  SweepTimer(Timers timers, Runnable sweep) {
    this.timers = timers;
    this.sweep = sweep;
  }

  /** Whether the sweep runs (it starts with the pool's first update). */
  boolean running() {
    return timer >= 0;
  }

  /** (Re)starts the sweep every {@code intervalMs}, the first one {@code intervalMs} from now. */
  void restart(long intervalMs) {
    cancel();
    this.intervalMs = intervalMs;
    timer = timers.schedule(intervalMs, this::fire);
  }

  private void fire() {
    timer = timers.schedule(intervalMs, this::fire);
    sweep.run();
  }

  void cancel() {
    if (timer >= 0) {
      timers.cancel(timer);
      timer = -1;
    }
  }
}
