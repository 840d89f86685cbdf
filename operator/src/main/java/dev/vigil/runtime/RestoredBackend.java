package dev.vigil.runtime;

import dev.vigil.health.ActiveState;
import dev.vigil.health.DampingState;
import java.util.List;

/**
 * A backend's state as a previous operator left it in status and slices, so a restart does not
 * start the pool over from Unknown (docs/design.md §2 rule 8) and never releases a damped backend
 * early; the voters' answers on its last Down verdict (docs/design.md §8), so the next owner's
 * status still shows them; and the reporters' keyed batches that ejected it ({@link EjectionKeys}),
 * so the next owner does not apply one of them again.
 *
 * @param votes null when status shows none
 * @param ejectedBy the reporters' keyed batches that ejected it lately, as status shows them
 */
public record RestoredBackend(
    ActiveState state,
    int ejections,
    long ejectedUntil,
    DampingState damping,
    long since,
    Confirmer.Votes votes,
    List<BatchKey> ejectedBy) {

  public RestoredBackend {
    ejectedBy = ejectedBy == null ? List.of() : List.copyOf(ejectedBy);
  }

  /** Without keyed batches. */
  public RestoredBackend(
      ActiveState state,
      int ejections,
      long ejectedUntil,
      DampingState damping,
      long since,
      Confirmer.Votes votes) {
    this(state, ejections, ejectedUntil, damping, since, votes, List.of());
  }

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
