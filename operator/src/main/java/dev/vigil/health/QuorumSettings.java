package dev.vigil.health;

/**
 * {@code quorum}: checker quorum across zones, docs/design.md §8. The owner of a pool asks up to
 * {@code confirmers} voters in other zones to confirm each active Down verdict, waits at most
 * {@code timeoutMs} for their answers and decides by {@link Confirmation#down(int, int)} with
 * {@code downPercent}.
 *
 * @param confirmers {@code quorum.confirmers}: voters in other zones asked per Down; 1 to 5
 * @param downPercent {@code quorum.downPercent}: Down iff down votes x 100 > downPercent x deciding
 *     voters; 0 to 99 (at 100 no Down could be confirmed)
 * @param timeoutMs {@code quorum.timeout}: how long the owner waits for answers after its own
 *     {@code fall}; positive. Absent in the policy, it is {@link #defaultTimeoutMs}.
 */
public record QuorumSettings(int confirmers, int downPercent, long timeoutMs) {
  /** The default of {@code quorum.confirmers}. */
  public static final int DEFAULT_CONFIRMERS = 2;

  public QuorumSettings {
    InvalidSettingsException.checkBetween("quorum.confirmers", confirmers, 1, 5);
    if (downPercent < 0 || downPercent > 99) {
      throw new InvalidSettingsException(
          "quorum.downPercent",
          "must be between 0 and 99 (at 100 no Down could be confirmed), was " + downPercent);
    }
    InvalidSettingsException.checkAtLeast("quorum.timeout", timeoutMs, 1, "ms");
  }

  /**
   * The default of {@code quorum.timeout}: {@code interval x fall + timeout}, the time a voter that
   * starts probing at the question needs to reach its own {@code fall} (docs/design.md §8).
   */
  public static long defaultTimeoutMs(long intervalMs, int fall, long probeTimeoutMs) {
    return intervalMs * fall + probeTimeoutMs;
  }

  /** Every default, the timeout computed from these active-check settings. */
  public static QuorumSettings defaults(long intervalMs, int fall, long probeTimeoutMs) {
    return new QuorumSettings(
        DEFAULT_CONFIRMERS,
        Confirmation.DEFAULT_DOWN_PERCENT,
        defaultTimeoutMs(intervalMs, fall, probeTimeoutMs));
  }

  /** How the decision core takes a Down verdict under this quorum: by a vote. */
  public Confirmation confirmation() {
    return Confirmation.vote(downPercent);
  }
}
