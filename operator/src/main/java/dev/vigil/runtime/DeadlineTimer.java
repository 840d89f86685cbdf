package dev.vigil.runtime;

import dev.vigil.probe.Timers;
import java.util.function.LongSupplier;

/**
 * One timer for the core's next deadline of one kind (the next ejection end, the next release of a
 * damped backend): re-armed only when the deadline moved, so an event that leaves it where it was
 * costs no timer. Runs on the pool's context.
 */
final class DeadlineTimer {
  /** No deadline: {@link Long#MAX_VALUE} (or a negative time) arms nothing. */
  static final long NONE = Long.MAX_VALUE;

  private final Timers timers;
  private final LongSupplier clock;
  private final Runnable onDeadline;
  private long timer = -1;
  private long armedAt = NONE;

  DeadlineTimer(Timers timers, LongSupplier clock, Runnable onDeadline) {
    this.timers = timers;
    this.clock = clock;
    this.onDeadline = onDeadline;
  }

  /** Fires {@code onDeadline} at {@code deadline} (epoch ms) unless it is already armed for it. */
  void arm(long deadline) {
    if (deadline == armedAt) {
      return;
    }
    cancel();
    armedAt = deadline;
    if (deadline == NONE || deadline < 0) {
      return;
    }
    long delay = Math.max(1, deadline - clock.getAsLong());
    timer =
        timers.schedule(
            delay,
            () -> {
              timer = -1;
              armedAt = NONE;
              onDeadline.run();
            });
  }

  /** Disarms the timer; the next {@link #arm} arms it again for any deadline. */
  void cancel() {
    if (timer >= 0) {
      timers.cancel(timer);
      timer = -1;
    }
    armedAt = NONE;
  }
}
