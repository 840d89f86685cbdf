package dev.vigil.health;

/**
 * Which interval the scheduler should use for a backend's next probe (docs/design.md §1 {@code
 * active.fastInterval}, {@code active.downInterval}), as the decision core sees it after each
 * event. The core only names the phase; the scheduler owns time.
 */
public enum ProbePhase {
  /** Up with no fail run, or Unknown: {@code active.interval}. */
  NORMAL,
  /**
   * Mid-streak toward a change (Up with a fail run >= 1, or Down with a pass run >= 1): {@code
   * active.fastInterval}, as HAProxy's {@code fastinter}.
   */
  FAST,
  /** Down with no pass run: {@code active.downInterval}, as HAProxy's {@code downinter}. */
  DOWN;

  /** The phase of a backend in {@code state} with these runs. */
  public static ProbePhase of(ActiveState state, int passRun, int failRun) {
    return switch (state) {
      case UNKNOWN -> NORMAL;
      case UP -> failRun >= 1 ? FAST : NORMAL;
      case DOWN -> passRun >= 1 ? FAST : DOWN;
    };
  }
}
