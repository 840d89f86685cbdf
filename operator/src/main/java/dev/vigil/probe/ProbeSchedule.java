package dev.vigil.probe;

import dev.vigil.budget.ProbeClass;
import dev.vigil.budget.ProbeStretch;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * When to probe one backend (docs/design.md §1 {@code active.interval}, {@code
 * active.fastInterval}, {@code active.downInterval}, {@code active.jitterPercent}).
 *
 * @param interval the time between two probe starts in the {@link ProbeClass#NORMAL} phase, >= 100
 *     ms
 * @param fastInterval the same while the backend is mid-streak toward a change ({@link
 *     ProbeClass#FAST}), >= 100 ms
 * @param downInterval the same while the backend is Down with no pass run ({@link
 *     ProbeClass#DOWN}), >= 100 ms
 * @param jitterPercent each wait is the phase's interval +/- this percent, 0..50
 */
public record ProbeSchedule(
    Duration interval, Duration fastInterval, Duration downInterval, int jitterPercent) {

  public static final ProbeSchedule DEFAULT = new ProbeSchedule(Duration.ofSeconds(5), 10);

  /** The most a start is taken early to share a wake-up with another ({@link #early}). */
  static final long MAX_EARLY_MS = 25;

  public ProbeSchedule {
    atLeast100ms("active.interval", interval);
    atLeast100ms("active.fastInterval", fastInterval);
    atLeast100ms("active.downInterval", downInterval);
    if (jitterPercent < 0 || jitterPercent > 50) {
      throw new IllegalArgumentException(
          "active.jitterPercent: must be 0..50, got " + jitterPercent);
    }
  }

  /** One interval for every phase. */
  public ProbeSchedule(Duration interval, int jitterPercent) {
    this(interval, interval, interval, jitterPercent);
  }

  /** The wanted interval of this class. */
  public Duration interval(ProbeClass phase) {
    return switch (phase) {
      case NORMAL, QUIET -> interval;
      case HOT -> fastInterval;
      case DOWN -> downInterval;
    };
  }

  /** The interval of this class under the probe budget's {@code stretch}, in ms. */
  public long intervalMs(ProbeClass phase, ProbeStretch stretch) {
    return stretch.stretch(phase, interval(phase).toMillis());
  }

  /**
   * How early a start in this phase may be taken with one the timer fired for, so that probes due
   * within a few milliseconds share one wake-up of the event loop (issue 15: each wake-up costs a
   * context switch): a quarter of the jitter (interval x jitterPercent / 400), at most {@link
   * #MAX_EARLY_MS}; none without jitter. The cadence stays on the planned times.
   */
  long early(ProbeClass phase) {
    return Math.min(MAX_EARLY_MS, interval(phase).toMillis() * jitterPercent / 400);
  }

  /**
   * The wait before the next planned start: the phase's interval +/- jitter, drawn from the band
   * narrowed by {@link #early} on each side, so that a start taken early (or the previous one taken
   * early) still keeps every gap between actual starts within interval +/- jitter.
   */
  long gap(ProbeClass phase, ProbeStretch stretch, RandomGenerator random) {
    long interval = intervalMs(phase, stretch);
    double spread = interval * jitterPercent / 100.0 - early(phase);
    return spread <= 0 ? interval : Math.round(interval + random.nextDouble(-spread, spread));
  }

  /** Refuses a probe timeout longer than any of the three intervals, naming the field. */
  public void checkTimeout(Duration timeout) {
    if (timeout.compareTo(shortest()) > 0) {
      throw new IllegalArgumentException(
          "active.timeout: must not exceed active.interval, fastInterval or downInterval ("
              + timeout
              + " > "
              + shortest()
              + ")");
    }
  }

  /** The shortest of the three intervals. */
  public Duration shortest() {
    Duration min = interval.compareTo(fastInterval) <= 0 ? interval : fastInterval;
    return min.compareTo(downInterval) <= 0 ? min : downInterval;
  }

  private static void atLeast100ms(String field, Duration d) {
    Objects.requireNonNull(d, field);
    if (d.toMillis() < 100) {
      throw new IllegalArgumentException(field + ": must be at least 100ms, got " + d);
    }
  }
}
