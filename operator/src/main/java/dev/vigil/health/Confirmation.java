package dev.vigil.health;

/**
 * How a pool's owner decides its own Down verdicts (docs/design.md §8): alone, by a vote of the
 * checkers in other zones, or not at all while it doubts itself and has no one to ask. Ups are
 * never confirmed, nor are passive ejections (they come from real traffic).
 *
 * @param mode how a Down verdict becomes a Down
 * @param downPercent with {@link Mode#VOTE}: Down iff down votes x 100 > downPercent x deciding
 *     voters (the owner counts as a down vote); 0 to 99
 */
public record Confirmation(Mode mode, int downPercent) {
  /** The default of {@code quorum.downPercent}: more than half of the deciding voters. */
  public static final int DEFAULT_DOWN_PERCENT = 50;

  /** Today's behaviour: the owner's verdict is the decision. */
  public static final Confirmation ALONE = new Confirmation(Mode.ALONE, DEFAULT_DOWN_PERCENT);

  /** A Suspect owner with no live voter in another zone: no new Down (Ups go through). */
  public static final Confirmation FREEZE = new Confirmation(Mode.FREEZE, DEFAULT_DOWN_PERCENT);

  /** How a Down verdict becomes a Down. */
  public enum Mode {
    /** At once. */
    ALONE,
    /** After the voters answer ({@link PoolHealth#onVotes}). */
    VOTE,
    /** Never: the backend stays Up and its verdict is held. */
    FREEZE
  }

  public Confirmation {
    if (mode == null) {
      throw new IllegalArgumentException("confirmation mode must be set");
    }
    if (downPercent < 0 || downPercent > 99) {
      throw new IllegalArgumentException(
          "quorum.downPercent must be 0 to 99 (at 100 no Down could be confirmed), got "
              + downPercent);
    }
  }

  /** Confirm each Down by a vote with this threshold. */
  public static Confirmation vote(int downPercent) {
    return new Confirmation(Mode.VOTE, downPercent);
  }

  /**
   * The vote rule: Down iff {@code downVotes x 100 > downPercent x decidingVoters}, where the
   * deciding voters are the owner and every voter that answered Up or Down (an abstention counts
   * for neither).
   */
  public boolean down(int downVotes, int decidingVoters) {
    return (long) downVotes * 100 > (long) downPercent * decidingVoters;
  }
}
