package dev.vigil.health;

/**
 * An immutable copy of one backend's decision state, for status writers on any thread.
 *
 * @param damped held back by flap damping (docs/design.md §2.1)
 * @param merit the damping merit as last set, at {@code meritAt} (epoch ms), before decay
 * @param releaseAt when a damped backend is released (epoch ms); 0 when not damped
 * @param hold what the admin state and the agent make of it (docs/decision.md)
 */
public record BackendView(
    String id,
    ActiveState state,
    int passRun,
    int failRun,
    int upstreamErrors,
    int localOriginErrors,
    int multiplier,
    boolean ejected,
    long ejectedUntil,
    boolean draining,
    boolean available,
    boolean damped,
    double merit,
    long meritAt,
    long releaseAt,
    BackendHold hold) {

  public BackendView {
    hold = hold == null ? BackendHold.NONE : hold;
  }

  /** Which interval the scheduler should use for this backend's next probe. */
  public ProbePhase phase() {
    return ProbePhase.of(state, passRun, failRun);
  }
}
