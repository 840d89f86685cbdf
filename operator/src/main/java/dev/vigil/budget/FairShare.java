package dev.vigil.budget;

import java.util.Arrays;

/**
 * Max-min fair shares with floors: divides {@code amount} so that each claimant gets {@code
 * clamp(level, floor, demand)} for one water level, the same for all. A claimant that asks for less
 * than its fair share gets all it asks, and the rest is divided among the others; nobody gets below
 * its floor. The probe budget's fairness between namespaces, then between pools (as the write
 * budget's turns between namespaces). O(n log n), pure.
 */
final class FairShare {
  private FairShare() {}

  /**
   * The shares of {@code amount}; every floor when it covers no more than the floors, every demand
   * when it covers them all.
   *
   * @param floors what each must get, each {@code <= demands[i]}
   * @param demands what each asks for
   */
  static double[] of(double amount, double[] floors, double[] demands) {
    int n = floors.length;
    double floorSum = 0;
    double demandSum = 0;
    for (int i = 0; i < n; i++) {
      floorSum += floors[i];
      demandSum += demands[i];
    }
    if (amount >= demandSum) {
      return demands.clone();
    }
    if (amount <= floorSum) {
      return floors.clone();
    }
    double level = level(amount, floors, demands, floorSum);
    double[] shares = new double[n];
    for (int i = 0; i < n; i++) {
      shares[i] = Math.max(floors[i], Math.min(demands[i], level));
    }
    return shares;
  }

  /**
   * The water level: the share sum is {@code base + active x level} between two neighbouring floors
   * or demands, where {@code active} counts the claimants between their floor and demand.
   */
  private static double level(double amount, double[] floors, double[] demands, double floorSum) {
    int n = floors.length;
    double[] values = new double[2 * n];
    for (int i = 0; i < n; i++) {
      values[i] = floors[i];
      values[n + i] = demands[i];
    }
    Integer[] order = new Integer[2 * n];
    for (int i = 0; i < 2 * n; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(values[a], values[b]));
    double base = floorSum;
    int active = 0;
    for (int e : order) {
      double v = values[e];
      if (active > 0 && base + active * v >= amount) {
        return (amount - base) / active;
      }
      if (e < n) {
        base -= floors[e];
        active++;
      } else {
        base += demands[e - n];
        active--;
      }
    }
    return values[order[2 * n - 1]];
  }
}
