package dev.vigil.budget;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.DoubleUnaryOperator;

/**
 * docs/design.md §9 written the plain way, to check {@link ProbeBudget} against: one entry per
 * backend (not per class), every rate summed backend by backend, and every "find the level at which
 * the sum is the budget" done by bisection instead of {@link ProbeBudget}'s segment arithmetic.
 * Slow and obviously right; tests only.
 */
final class ReferenceBudget {
  /** One backend: its pool, namespace, class, wanted interval and the longest it may get. */
  private record Probe(int pool, String namespace, ProbeClass c, double interval, double longest) {
    double rate(double stretch) {
      return 1000.0 / Math.min(interval * stretch, longest);
    }
  }

  /** The result: stretch per pool and class, and whether the last step (hot) was reached. */
  record Result(double[][] stretch, boolean exceeded) {}

  private ReferenceBudget() {}

  static Result plan(double budget, List<PoolDemand> pools) {
    List<Probe> all = new ArrayList<>();
    for (int i = 0; i < pools.size(); i++) {
      PoolDemand p = pools.get(i);
      for (ProbeClass c : ProbeClass.values()) {
        for (int k = 0; k < p.counts().of(c); k++) {
          double t = p.intervalMs(c);
          all.add(new Probe(i, p.namespace(), c, t, Math.max(t, p.maxIntervalMs())));
        }
      }
    }
    double[][] stretch = new double[pools.size()][4];
    for (double[] s : stretch) {
      java.util.Arrays.fill(s, 1.0);
    }
    double hot = sum(all, b -> b.c() == ProbeClass.HOT, b -> b.rate(1));
    boolean exceeded;
    if (hot >= budget) {
      atLongest(pools, stretch, List.of(ProbeClass.QUIET, ProbeClass.DOWN, ProbeClass.NORMAL));
      exceeded = true;
    } else {
      double left = budget - hot;
      double quietWanted = sum(all, b -> b.c() == ProbeClass.QUIET, b -> b.rate(1));
      double quietFloor = sum(all, b -> b.c() == ProbeClass.QUIET, b -> 1000.0 / b.longest());
      double restWanted = sum(all, ReferenceBudget::downOrNormal, b -> b.rate(1));
      double restFloor = sum(all, ReferenceBudget::downOrNormal, b -> 1000.0 / b.longest());
      exceeded = false;
      if (quietWanted + restWanted <= left) {
        // nothing stretches
      } else if (restWanted + quietFloor <= left) {
        fairly(all, pools.size(), b -> b.c() == ProbeClass.QUIET, left - restWanted, stretch);
      } else {
        atLongest(pools, stretch, List.of(ProbeClass.QUIET));
        if (restFloor <= left - quietFloor) {
          fairly(all, pools.size(), ReferenceBudget::downOrNormal, left - quietFloor, stretch);
        } else {
          atLongest(pools, stretch, List.of(ProbeClass.DOWN, ProbeClass.NORMAL));
          exceeded = true;
        }
      }
    }
    if (exceeded) {
      for (int i = 0; i < pools.size(); i++) {
        PoolDemand p = pools.get(i);
        double longest = Math.max(1, (double) p.maxIntervalMs() / p.fastIntervalMs());
        stretch[i][ProbeClass.HOT.ordinal()] = Math.min(Math.max(1, hot / budget), longest);
      }
    }
    return new Result(stretch, exceeded);
  }

  private static boolean downOrNormal(Probe b) {
    return b.c() == ProbeClass.DOWN || b.c() == ProbeClass.NORMAL;
  }

  private static void atLongest(List<PoolDemand> pools, double[][] stretch, List<ProbeClass> cs) {
    for (int i = 0; i < pools.size(); i++) {
      for (ProbeClass c : cs) {
        PoolDemand p = pools.get(i);
        stretch[i][c.ordinal()] = Math.max(1, (double) p.maxIntervalMs() / p.intervalMs(c));
      }
    }
  }

  /** Namespaces share {@code amount} max-min fairly, then pools within each, then one stretch. */
  private static void fairly(
      List<Probe> all,
      int poolCount,
      java.util.function.Predicate<Probe> stage,
      double amount,
      double[][] stretch) {
    Map<String, List<Probe>> byNamespace = new TreeMap<>();
    for (Probe b : all) {
      if (stage.test(b)) {
        byNamespace.computeIfAbsent(b.namespace(), k -> new ArrayList<>()).add(b);
      }
    }
    Map<String, Double> nsShare = waterFill(byNamespace, amount);
    for (var ns : byNamespace.entrySet()) {
      Map<Integer, List<Probe>> byPool = new TreeMap<>();
      for (Probe b : ns.getValue()) {
        byPool.computeIfAbsent(b.pool(), k -> new ArrayList<>()).add(b);
      }
      Map<Integer, Double> poolShare = waterFill(byPool, nsShare.get(ns.getKey()));
      for (var pool : byPool.entrySet()) {
        List<Probe> probes = pool.getValue();
        double share = poolShare.get(pool.getKey());
        double s = solve(x -> sum(probes, b -> true, b -> b.rate(x)), share, 1, 1e9, true);
        for (Probe b : probes) {
          stretch[pool.getKey()][b.c().ordinal()] =
              Math.min(s, Math.max(1, b.longest() / b.interval()));
        }
      }
    }
  }

  /** Each group gets clamp(level, its floor, its demand); the level where they sum to amount. */
  private static <K> Map<K, Double> waterFill(Map<K, List<Probe>> groups, double amount) {
    Map<K, double[]> bounds = new TreeMap<>();
    double top = 0;
    for (var g : groups.entrySet()) {
      double floor = sum(g.getValue(), b -> true, b -> 1000.0 / b.longest());
      double demand = sum(g.getValue(), b -> true, b -> b.rate(1));
      bounds.put(g.getKey(), new double[] {floor, demand});
      top = Math.max(top, demand);
    }
    DoubleUnaryOperator total =
        level -> {
          double sum = 0;
          for (double[] fd : bounds.values()) {
            sum += Math.max(fd[0], Math.min(fd[1], level));
          }
          return sum;
        };
    double level = solve(total, amount, 0, top, false);
    Map<K, Double> shares = new TreeMap<>();
    bounds.forEach((k, fd) -> shares.put(k, Math.max(fd[0], Math.min(fd[1], level))));
    return shares;
  }

  /** Bisection: the x in [lo, hi] where f(x) = target, f falling (or rising) in x. */
  private static double solve(
      DoubleUnaryOperator f, double target, double lo, double hi, boolean falling) {
    for (int i = 0; i < 300; i++) {
      double mid = lo + (hi - lo) / 2;
      boolean tooMuch = falling ? f.applyAsDouble(mid) > target : f.applyAsDouble(mid) < target;
      if (tooMuch) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo + (hi - lo) / 2;
  }

  private static double sum(
      List<Probe> probes,
      java.util.function.Predicate<Probe> which,
      java.util.function.ToDoubleFunction<Probe> rate) {
    double s = 0;
    for (Probe b : probes) {
      if (which.test(b)) {
        s += rate.applyAsDouble(b);
      }
    }
    return s;
  }
}
