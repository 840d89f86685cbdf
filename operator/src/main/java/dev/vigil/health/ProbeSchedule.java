package dev.vigil.health;

import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * When to probe (DESIGN §2.1): the first probe of each backend at a random offset in [0, interval),
 * every later one after interval +/- {@code jitterPercent}. Pure: the random source is injected,
 * and the prober's scheduler turns these delays into timers.
 */
public final class ProbeSchedule {
  private final RandomGenerator random;

  public ProbeSchedule(RandomGenerator random) {
    this.random = Objects.requireNonNull(random, "random");
  }

  /** Delay before a new backend's first probe: uniform in [0, interval). */
  public long firstDelayMs(HealthSettings s) {
    return random.nextLong(s.intervalMs());
  }

  /** Delay between two probes of one backend: uniform in interval +/- jitter (inclusive). */
  public long nextDelayMs(HealthSettings s) {
    long spread = s.intervalMs() * s.jitterPercent() / 100;
    if (spread == 0) {
      return s.intervalMs();
    }
    return s.intervalMs() - spread + random.nextLong(2 * spread + 1);
  }
}
