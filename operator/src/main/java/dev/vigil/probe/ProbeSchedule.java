package dev.vigil.probe;

import java.time.Duration;
import java.util.Objects;

/**
 * When to probe one backend (DESIGN §1 {@code active.interval}, {@code active.jitterPercent}).
 *
 * @param interval the time between two probe starts, >= 100 ms
 * @param jitterPercent each wait is {@code interval} +/- this percent, 0..50
 */
public record ProbeSchedule(Duration interval, int jitterPercent) {

  public static final ProbeSchedule DEFAULT = new ProbeSchedule(Duration.ofSeconds(5), 10);

  public ProbeSchedule {
    Objects.requireNonNull(interval, "active.interval");
    if (interval.toMillis() < 100) {
      throw new IllegalArgumentException(
          "active.interval: must be at least 100ms, got " + interval);
    }
    if (jitterPercent < 0 || jitterPercent > 50) {
      throw new IllegalArgumentException(
          "active.jitterPercent: must be 0..50, got " + jitterPercent);
    }
  }
}
