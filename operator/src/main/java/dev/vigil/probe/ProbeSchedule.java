package dev.vigil.probe;

import dev.vigil.health.ProbePhase;
import java.time.Duration;
import java.util.Objects;

/**
 * When to probe one backend (docs/design.md §1 {@code active.interval}, {@code
 * active.fastInterval}, {@code active.downInterval}, {@code active.jitterPercent}).
 *
 * @param interval the time between two probe starts in the {@link ProbePhase#NORMAL} phase, >= 100
 *     ms
 * @param fastInterval the same while the backend is mid-streak toward a change ({@link
 *     ProbePhase#FAST}), >= 100 ms
 * @param downInterval the same while the backend is Down with no pass run ({@link
 *     ProbePhase#DOWN}), >= 100 ms
 * @param jitterPercent each wait is the phase's interval +/- this percent, 0..50
 */
public record ProbeSchedule(
    Duration interval, Duration fastInterval, Duration downInterval, int jitterPercent) {

  public static final ProbeSchedule DEFAULT = new ProbeSchedule(Duration.ofSeconds(5), 10);

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

  /** The interval of this phase. */
  public Duration interval(ProbePhase phase) {
    return switch (phase) {
      case NORMAL -> interval;
      case FAST -> fastInterval;
      case DOWN -> downInterval;
    };
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
