package dev.vigil.budget;

import dev.vigil.health.ActiveState;
import dev.vigil.health.ProbePhase;

/**
 * A backend's class under the probe budget (docs/design.md §9), first match in this order. Each
 * class has its wanted interval; when a replica's probes exceed the budget, {@code quiet} stretches
 * first, then {@code normal} and {@code down} alike, and {@code hot} only when nothing else is
 * left.
 */
public enum ProbeClass {
  /**
   * In transition or freshly suspect: Unknown, Up with a fail streak below fall, Down with a pass
   * streak, or a passive failure or a confirm request within the last interval; {@code
   * active.fastInterval}.
   */
  HOT,
  /** Down with no pass streak: {@code active.downInterval}. */
  DOWN,
  /**
   * Up, not ejected, at least {@code active.quietMinRequests} passive successes and no passive
   * failure within the last {@code interval x 10}: real traffic vouches for it; {@code
   * active.interval}, stretched first.
   */
  QUIET,
  /** Everything else: {@code active.interval}. */
  NORMAL;

  /** How many {@code interval}s back real traffic must vouch for a quiet backend. */
  public static final int QUIET_WINDOW_INTERVALS = 10;

  /**
   * The class of the decision core's probe phase alone, for a backend with no passive input (and
   * not Unknown): FAST is hot, DOWN down, NORMAL normal.
   */
  public static ProbeClass of(ProbePhase phase) {
    return switch (phase) {
      case FAST -> HOT;
      case DOWN -> DOWN;
      case NORMAL -> NORMAL;
    };
  }

  /**
   * The class of one backend now.
   *
   * @param phase the decision core's probe phase of the backend
   * @param state its active state
   * @param ejected whether it is ejected
   * @param trail its recent passive outcomes
   * @param confirmAskedAtMs when its Down verdict last went to the voters, or {@link
   *     Long#MIN_VALUE}
   * @param intervalMs the pool's {@code active.interval}
   * @param quietMinRequests the pool's {@code active.quietMinRequests}; 0 means no backend is quiet
   */
  public static ProbeClass of(
      ProbePhase phase,
      ActiveState state,
      boolean ejected,
      PassiveTrail trail,
      long confirmAskedAtMs,
      long intervalMs,
      int quietMinRequests,
      long nowMs) {
    if (state == ActiveState.UNKNOWN
        || phase == ProbePhase.FAST
        || trail.failedSince(nowMs - intervalMs)
        || (confirmAskedAtMs != Long.MIN_VALUE && confirmAskedAtMs > nowMs - intervalMs)) {
      return HOT;
    }
    if (phase == ProbePhase.DOWN) {
      return DOWN;
    }
    if (state == ActiveState.UP
        && !ejected
        && quietMinRequests > 0
        && trail.vouches(nowMs - intervalMs * QUIET_WINDOW_INTERVALS, quietMinRequests)) {
      return QUIET;
    }
    return NORMAL;
  }
}
