package dev.vigil.budget;

/**
 * What one pool asks of the probe budget: its backends per {@link ProbeClass}, the wanted interval
 * of each class and the longest any may stretch to ({@code active.maxInterval}).
 *
 * @param namespace the pool's namespace: the budget is shared between namespaces first
 * @param pool the pool's name within it
 * @param counts backends per class, indexed by {@link ProbeClass#ordinal()}
 * @param fastIntervalMs the {@code hot} interval
 * @param downIntervalMs the {@code down} interval
 * @param intervalMs the {@code quiet} and {@code normal} interval
 * @param maxIntervalMs no class stretches past this (a class whose own interval is longer keeps it)
 */
public record PoolDemand(
    String namespace,
    String pool,
    ClassCounts counts,
    long fastIntervalMs,
    long downIntervalMs,
    long intervalMs,
    long maxIntervalMs) {

  public PoolDemand {
    if (fastIntervalMs < 1 || downIntervalMs < 1 || intervalMs < 1 || maxIntervalMs < 1) {
      throw new IllegalArgumentException("intervals must be >= 1 ms");
    }
  }

  /** The wanted interval of {@code c}. */
  public long intervalMs(ProbeClass c) {
    return switch (c) {
      case HOT -> fastIntervalMs;
      case DOWN -> downIntervalMs;
      case QUIET, NORMAL -> intervalMs;
    };
  }

  /** The most {@code c} may stretch: up to {@code maxInterval}, never below 1. */
  public double maxStretch(ProbeClass c) {
    return Math.max(1.0, (double) maxIntervalMs / intervalMs(c));
  }

  /** Probes a second {@code c} asks for at its wanted interval. */
  public double rate(ProbeClass c) {
    return counts.of(c) * 1000.0 / intervalMs(c);
  }

  /** Probes a second {@code c} makes at stretch {@code s} (capped at {@link #maxStretch}). */
  public double rate(ProbeClass c, double s) {
    return rate(c) / Math.min(s, maxStretch(c));
  }

  /** Probes a second the whole pool asks for. */
  public double rate() {
    double sum = 0;
    for (ProbeClass c : ProbeClass.values()) {
      sum += rate(c);
    }
    return sum;
  }
}
