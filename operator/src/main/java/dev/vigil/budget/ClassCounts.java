package dev.vigil.budget;

/**
 * Backends per {@link ProbeClass} of one pool: an immutable snapshot the pool publishes for the
 * budget's once-a-second plan.
 */
public record ClassCounts(int hot, int down, int quiet, int normal) {
  public static final ClassCounts NONE = new ClassCounts(0, 0, 0, 0);

  public ClassCounts {
    if (hot < 0 || down < 0 || quiet < 0 || normal < 0) {
      throw new IllegalArgumentException("class counts must be >= 0");
    }
  }

  public int of(ProbeClass c) {
    return switch (c) {
      case HOT -> hot;
      case DOWN -> down;
      case QUIET -> quiet;
      case NORMAL -> normal;
    };
  }

  public int total() {
    return hot + down + quiet + normal;
  }
}
