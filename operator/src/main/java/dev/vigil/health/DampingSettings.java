package dev.vigil.health;

/**
 * {@code damping}: flap damping after BGP route-flap damping (RFC 2439), exactly as docs/design.md
 * §2.1. Each active transition Up to Down or Down to Up adds {@code penalty} to the backend's
 * merit, which halves every {@code halfLifeMs} and is capped at {@link #ceiling()}; a merit above
 * {@code suppressThreshold} right after a penalty damps the backend, which is released at the first
 * millisecond its decayed merit is at or below {@code reuseThreshold}.
 */
public record DampingSettings(
    int penalty,
    int suppressThreshold,
    int reuseThreshold,
    long halfLifeMs,
    long maxSuppressTimeMs) {
  /** The smallest {@code damping.halfLife} accepted. */
  public static final long MIN_HALF_LIFE_MS = 1_000;

  public DampingSettings {
    InvalidSettingsException.checkBetween("damping.penalty", penalty, 1, 1_000_000);
    InvalidSettingsException.checkBetween(
        "damping.suppressThreshold", suppressThreshold, 1, 1_000_000);
    InvalidSettingsException.checkBetween("damping.reuseThreshold", reuseThreshold, 1, 1_000_000);
    if (reuseThreshold >= suppressThreshold) {
      throw new InvalidSettingsException(
          "damping.reuseThreshold",
          "must be below damping.suppressThreshold ("
              + suppressThreshold
              + "), was "
              + reuseThreshold);
    }
    InvalidSettingsException.checkAtLeast("damping.halfLife", halfLifeMs, MIN_HALF_LIFE_MS, "ms");
    InvalidSettingsException.checkAtLeast("damping.maxSuppressTime", maxSuppressTimeMs, 1, "ms");
    if (maxSuppressTimeMs > 1_000 * halfLifeMs) {
      throw new InvalidSettingsException(
          "damping.maxSuppressTime",
          "must be at most 1000 x damping.halfLife ("
              + halfLifeMs
              + "ms), was "
              + maxSuppressTimeMs
              + "ms");
    }
  }

  /**
   * docs/design.md §1 defaults: penalty 1000, suppress 3000, reuse 750, half-life 60s, max 300s.
   */
  public static DampingSettings defaults() {
    return new DampingSettings(1000, 3000, 750, 60_000, 300_000);
  }

  /**
   * The cap on a merit: {@code reuseThreshold x 2^(maxSuppressTime / halfLife)}, so no suppression
   * outlasts {@code maxSuppressTime} after the last flap.
   */
  public double ceiling() {
    return reuseThreshold * Math.pow(2, (double) maxSuppressTimeMs / halfLifeMs);
  }

  /**
   * A merit {@code m} set at {@code t0}, decayed to {@code t}: {@code m x 2^(-(t-t0)/halfLife)}.
   */
  public double decay(double m, long t0, long t) {
    return m == 0 ? 0 : m * Math.pow(2, -(double) (t - t0) / halfLifeMs);
  }

  /**
   * The first millisecond after {@code t0} at which merit {@code m} set at {@code t0} has decayed
   * to {@code reuseThreshold} or below: the closed form rounded up, then corrected by the formula
   * of {@link #decay} itself (semi-monotonic), so it is exact for that formula.
   */
  public long releaseAt(double m, long t0) {
    if (m <= reuseThreshold) {
      return t0;
    }
    long t = t0 + (long) Math.ceil(halfLifeMs * (Math.log(m / reuseThreshold) / Math.log(2)));
    while (decay(m, t0, t) > reuseThreshold) {
      t++;
    }
    while (t - 1 > t0 && decay(m, t0, t - 1) <= reuseThreshold) {
      t--;
    }
    return t;
  }
}
