package dev.vigil.shard;

import java.util.Arrays;
import java.util.List;

/**
 * A checker that doubts itself (docs/design.md §8, after Lifeguard's local health): a replica whose
 * failing share is high both in itself and against its peers more likely has a broken network than
 * broken backends. Pure.
 */
public final class SelfDoubt {
  /** A failing share at or above this may be Suspect. */
  public static final double SHARE = 0.30;

  /** ... and must be at least this many times the peers' median. */
  public static final double TIMES_MEDIAN = 3.0;

  /** Shares are ratios of counts: 0.3 against 3 x 0.1 must count as equal, not as 4e-17 short. */
  private static final double TOLERANCE = 1e-9;

  private SelfDoubt() {}

  /**
   * Suspect iff {@code own >= 0.30} and {@code own >= 3 x} the median of the other live replicas'
   * shares; with no other live replica, never.
   *
   * @param own this replica's failing share: backends whose last probe failed over backends it
   *     probes, 0 to 1
   * @param peers the other live replicas' shares, as their Leases carry them
   */
  public static boolean suspect(double own, List<Double> peers) {
    if (peers.isEmpty() || own + TOLERANCE < SHARE) {
      return false;
    }
    return own + TOLERANCE >= TIMES_MEDIAN * median(peers);
  }

  /** The median; of an even count, the mean of the middle two. */
  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
