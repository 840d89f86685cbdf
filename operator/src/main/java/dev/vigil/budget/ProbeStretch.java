package dev.vigil.budget;

/**
 * How far each class's wanted interval is stretched (1 = not at all): a pool's share of the probe
 * budget as its scheduler applies it. Every factor is already capped at the pool's {@code
 * maxInterval}.
 */
public record ProbeStretch(double hot, double down, double quiet, double normal) {
  public static final ProbeStretch NONE = new ProbeStretch(1, 1, 1, 1);

  public ProbeStretch {
    if (!(hot >= 1 && down >= 1 && quiet >= 1 && normal >= 1)) {
      throw new IllegalArgumentException(
          "stretch factors must be >= 1: " + hot + ", " + down + ", " + quiet + ", " + normal);
    }
  }

  public double of(ProbeClass c) {
    return switch (c) {
      case HOT -> hot;
      case DOWN -> down;
      case QUIET -> quiet;
      case NORMAL -> normal;
    };
  }

  /** {@code intervalMs} stretched for {@code c}, rounded to the millisecond. */
  public long stretch(ProbeClass c, long intervalMs) {
    return Math.round(intervalMs * of(c));
  }
}
