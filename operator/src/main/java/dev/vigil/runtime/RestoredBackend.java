package dev.vigil.runtime;

import dev.vigil.health.ActiveState;
import dev.vigil.health.DampingState;

/**
 * A backend's state as a previous operator left it in status and slices, so a restart does not
 * start the pool over from Unknown (docs/design.md §2 rule 8) and never releases a damped backend
 * early; and the voters' answers on its last Down verdict (docs/design.md §8), so the next owner's
 * status still shows them.
 *
 * @param votes null when status shows none
 */
public record RestoredBackend(
    ActiveState state,
    int ejections,
    long ejectedUntil,
    DampingState damping,
    long since,
    Confirmer.Votes votes) {

  /** Without the voters' answers. */
  public RestoredBackend(
      ActiveState state, int ejections, long ejectedUntil, DampingState damping, long since) {
    this(state, ejections, ejectedUntil, damping, since, null);
  }

  /** Without the time of the last state change (shown as the restore's time). */
  public RestoredBackend(
      ActiveState state, int ejections, long ejectedUntil, DampingState damping) {
    this(state, ejections, ejectedUntil, damping, 0);
  }

  /** Without flap-damping state (from a slice, or a status without merit). */
  public RestoredBackend(ActiveState state, int ejections, long ejectedUntil) {
    this(state, ejections, ejectedUntil, DampingState.NONE);
  }
}
