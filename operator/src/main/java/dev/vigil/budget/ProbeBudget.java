package dev.vigil.budget;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The probe budget's rule (docs/design.md §9): keeps a replica's probes a second within its budget
 * B by stretching intervals, class by class, never past {@code maxInterval}, shared fairly.
 *
 * <ol>
 *   <li>{@code hot} keeps its rate while its demand D_hot is below B; the rest R = B - D_hot is for
 *       the other classes.
 *   <li>If they ask for more than R, {@code quiet} stretches first, down to its floor (every quiet
 *       backend at {@code maxInterval}); then {@code normal} and {@code down} alike, one factor per
 *       pool, each capped at {@code maxInterval}.
 *   <li>Within a stage the stage's budget is shared max-min fairly ({@link FairShare}) between
 *       namespaces, then between the pools of a namespace: a namespace with ten times the backends
 *       gets no more than an equal share while the others want theirs. A pool's share is what its
 *       backends of the stage make at one common stretch.
 *   <li>If that is still over (every non-hot backend at {@code maxInterval}), or D_hot >= B, {@code
 *       hot} stretches by D_hot / B (capped at {@code maxInterval}) and the plan is {@link
 *       BudgetPlan#exceeded}.
 * </ol>
 *
 * Pure; O(pools log pools) per plan, never per backend.
 */
public final class ProbeBudget {
  /** The stretch stages after {@code hot}, in the order they give way. */
  private static final List<List<ProbeClass>> STAGES =
      List.of(List.of(ProbeClass.QUIET), List.of(ProbeClass.DOWN, ProbeClass.NORMAL));

  private ProbeBudget() {}

  /** The plan for {@code pools} within {@code budget} probes a second (> 0). */
  public static BudgetPlan plan(double budget, List<PoolDemand> pools) {
    if (!(budget > 0)) {
      throw new IllegalArgumentException("--probe-budget: must be > 0, got " + budget);
    }
    int n = pools.size();
    double hotDemand = 0;
    double demand = 0;
    for (PoolDemand p : pools) {
      hotDemand += p.rate(ProbeClass.HOT);
      demand += p.rate();
    }
    double[][] stretch = new double[n][ProbeClass.values().length];
    for (double[] s : stretch) {
      java.util.Arrays.fill(s, 1.0);
    }
    boolean exceeded = false;
    if (hotDemand >= budget) {
      allAtMax(pools, stretch, STAGES.size());
      exceeded = true;
    } else {
      double left = budget - hotDemand;
      int stage = 0;
      for (; stage < STAGES.size(); stage++) {
        double asked = 0;
        double floorsAfter = 0;
        for (PoolDemand p : pools) {
          for (int later = stage; later < STAGES.size(); later++) {
            for (ProbeClass c : STAGES.get(later)) {
              asked += p.rate(c);
            }
          }
          floorsAfter += floor(p, STAGES.get(stage));
        }
        if (asked <= left) {
          break; // this stage and those after it keep their rate
        }
        double keptAfter = asked - demandOf(pools, STAGES.get(stage));
        if (keptAfter + floorsAfter <= left) {
          share(pools, STAGES.get(stage), left - keptAfter, stretch);
          break;
        }
        allAtMax(pools, stretch, stage, stage + 1);
        left -= floorsAfter;
      }
      exceeded = stage == STAGES.size();
    }
    if (exceeded) {
      double hot = Math.max(1.0, hotDemand / budget);
      for (int i = 0; i < n; i++) {
        stretch[i][ProbeClass.HOT.ordinal()] =
            Math.min(hot, pools.get(i).maxStretch(ProbeClass.HOT));
      }
    }
    return plan(budget, demand, exceeded, pools, stretch);
  }

  private static BudgetPlan plan(
      double budget, double demand, boolean exceeded, List<PoolDemand> pools, double[][] s) {
    List<ProbeStretch> stretches = new ArrayList<>(pools.size());
    double planned = 0;
    double[] widest = {1, 1, 1, 1};
    for (int i = 0; i < pools.size(); i++) {
      PoolDemand p = pools.get(i);
      for (ProbeClass c : ProbeClass.values()) {
        planned += p.rate(c, s[i][c.ordinal()]);
        if (p.counts().of(c) > 0) {
          widest[c.ordinal()] = Math.max(widest[c.ordinal()], s[i][c.ordinal()]);
        }
      }
      stretches.add(new ProbeStretch(s[i][0], s[i][1], s[i][2], s[i][3]));
    }
    return new BudgetPlan(
        budget,
        demand,
        planned,
        exceeded,
        stretches,
        new ProbeStretch(widest[0], widest[1], widest[2], widest[3]));
  }

  /** Every class of the stages {@code from} (inclusive) to {@code to} (exclusive) at its max. */
  private static void allAtMax(List<PoolDemand> pools, double[][] stretch, int from, int to) {
    for (int i = 0; i < pools.size(); i++) {
      for (int stage = from; stage < to; stage++) {
        for (ProbeClass c : STAGES.get(stage)) {
          stretch[i][c.ordinal()] = pools.get(i).maxStretch(c);
        }
      }
    }
  }

  private static void allAtMax(List<PoolDemand> pools, double[][] stretch, int to) {
    allAtMax(pools, stretch, 0, to);
  }

  private static double demandOf(List<PoolDemand> pools, List<ProbeClass> classes) {
    double sum = 0;
    for (PoolDemand p : pools) {
      for (ProbeClass c : classes) {
        sum += p.rate(c);
      }
    }
    return sum;
  }

  /** What {@code classes} of the pool make with every backend at {@code maxInterval}. */
  static double floor(PoolDemand p, List<ProbeClass> classes) {
    double sum = 0;
    for (ProbeClass c : classes) {
      sum += p.rate(c) / p.maxStretch(c);
    }
    return sum;
  }

  /**
   * Shares {@code amount} between the pools' {@code classes} fairly (namespaces, then pools) and
   * sets each pool's stretch of those classes to make its share.
   */
  private static void share(
      List<PoolDemand> pools, List<ProbeClass> classes, double amount, double[][] stretch) {
    Map<String, List<Integer>> byNamespace = new LinkedHashMap<>();
    for (int i = 0; i < pools.size(); i++) {
      byNamespace.computeIfAbsent(pools.get(i).namespace(), k -> new ArrayList<>()).add(i);
    }
    List<List<Integer>> groups = new ArrayList<>(byNamespace.values());
    double[] nsFloors = new double[groups.size()];
    double[] nsDemands = new double[groups.size()];
    for (int g = 0; g < groups.size(); g++) {
      for (int i : groups.get(g)) {
        nsFloors[g] += floor(pools.get(i), classes);
        nsDemands[g] += demandOf(List.of(pools.get(i)), classes);
      }
    }
    double[] nsShares = FairShare.of(amount, nsFloors, nsDemands);
    for (int g = 0; g < groups.size(); g++) {
      List<Integer> members = groups.get(g);
      double[] floors = new double[members.size()];
      double[] demands = new double[members.size()];
      for (int k = 0; k < members.size(); k++) {
        PoolDemand p = pools.get(members.get(k));
        floors[k] = floor(p, classes);
        demands[k] = demandOf(List.of(p), classes);
      }
      double[] shares = FairShare.of(nsShares[g], floors, demands);
      for (int k = 0; k < members.size(); k++) {
        PoolDemand p = pools.get(members.get(k));
        double s = commonStretch(p, classes, shares[k]);
        for (ProbeClass c : classes) {
          stretch[members.get(k)][c.ordinal()] = Math.min(s, p.maxStretch(c));
        }
      }
    }
  }

  /**
   * The one stretch s at which the pool's {@code classes} make {@code share} probes a second, each
   * class capped at its own {@code maxStretch}: the rate is the uncapped classes' rate / s plus the
   * capped ones' floors, solved segment by segment as classes reach their cap.
   */
  static double commonStretch(PoolDemand p, List<ProbeClass> classes, double share) {
    double asked = demandOf(List.of(p), classes);
    if (share >= asked) {
      return 1.0;
    }
    List<ProbeClass> open = new ArrayList<>();
    for (ProbeClass c : classes) {
      if (p.rate(c) > 0) {
        open.add(c);
      }
    }
    open.sort((a, b) -> Double.compare(p.maxStretch(a), p.maxStretch(b)));
    double cappedRate = 0;
    double highestCap = 1.0;
    while (!open.isEmpty()) {
      double openRate = 0;
      for (ProbeClass c : open) {
        openRate += p.rate(c);
      }
      ProbeClass first = open.get(0);
      double room = share - cappedRate;
      double s = room > 0 ? openRate / room : Double.POSITIVE_INFINITY;
      if (s <= p.maxStretch(first)) {
        return Math.max(1.0, s);
      }
      cappedRate += p.rate(first) / p.maxStretch(first);
      highestCap = p.maxStretch(first);
      open.remove(0);
    }
    return highestCap;
  }
}
