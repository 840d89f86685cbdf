package dev.vigil.runtime;

import dev.vigil.health.Confirmation;

/**
 * Whether this replica doubts its own probes while it decides a pool (docs/design.md §8), as the
 * pool's status shows it in {@code CheckerSuspect}: not Suspect; Suspect with its Down verdicts
 * going to voters in other zones; or Suspect with no live voter in another zone, publishing no new
 * Down.
 */
public enum CheckerDoubt {
  /** Not Suspect: the replica's failing share is not far above its peers' (or it has none). */
  TRUSTED,
  /** Suspect: each Down verdict goes to the voters before it takes effect. */
  CONFIRMING,
  /** Suspect and no live voter in another zone: no new Down is published, Ups go through. */
  FROZEN;

  /**
   * @param suspect what the {@link Confirmer} says of this replica now
   * @param mode how the pool's Down verdicts decide now (a Suspect replica's is VOTE or FREEZE)
   */
  public static CheckerDoubt of(boolean suspect, Confirmation.Mode mode) {
    if (!suspect) {
      return TRUSTED;
    }
    return mode == Confirmation.Mode.FREEZE ? FROZEN : CONFIRMING;
  }
}
