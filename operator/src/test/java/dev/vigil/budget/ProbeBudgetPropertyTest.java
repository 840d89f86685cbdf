package dev.vigil.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ProbeBudget} against {@link ReferenceBudget} (docs/design.md §9 the plain way) over many
 * generated replicas: namespaces, pools, classes, intervals, maxIntervals and budgets from a seeded
 * random source, so a failure names its seed and case and replays.
 */
class ProbeBudgetPropertyTest {
  private static final long SEED = 37L;
  private static final int CASES = 1_000;
  private static final long[] INTERVALS = {100, 250, 500, 1000, 2000, 5000, 10000};

  @Test
  void stretchEqualsTheReferenceSchedulersOnGeneratedReplicas() {
    Random random = new Random(SEED);
    for (int n = 0; n < CASES; n++) {
      List<PoolDemand> pools = pools(random, 2_000);
      double budget = budget(random, pools);
      BudgetPlan plan = ProbeBudget.plan(budget, pools);
      ReferenceBudget.Result ref = ReferenceBudget.plan(budget, pools);
      String at = "seed " + SEED + " case " + n + ", budget " + budget + ", pools " + pools;
      assertThat(plan.exceeded()).as(at).isEqualTo(ref.exceeded());
      for (int i = 0; i < pools.size(); i++) {
        for (ProbeClass c : ProbeClass.values()) {
          if (pools.get(i).counts().of(c) == 0) {
            continue; // no backend: nothing to compare (either may name any stretch)
          }
          double expected = ref.stretch()[i][c.ordinal()];
          assertThat(plan.stretches().get(i).of(c))
              .as("%s: pool %d %s", at, i, c)
              .isCloseTo(expected, within(1e-6 * expected));
        }
      }
      if (!plan.exceeded()) {
        assertThat(plan.planned()).as(at).isLessThanOrEqualTo(budget * (1 + 1e-9));
      }
    }
  }

  @Test
  void hotIsNeverStretchedWhileItsDemandIsUnderHalfTheBudget() {
    Random random = new Random(SEED + 1);
    int checked = 0;
    for (int n = 0; n < CASES; n++) {
      List<PoolDemand> pools = pools(random, 5_000);
      double hot = pools.stream().mapToDouble(p -> p.rate(ProbeClass.HOT)).sum();
      double budget = budget(random, pools);
      if (hot >= budget / 2) {
        budget = hot * 2 + random.nextDouble() * 100 + 1;
      }
      BudgetPlan plan = ProbeBudget.plan(budget, pools);
      for (ProbeStretch s : plan.stretches()) {
        assertThat(s.hot()).as("seed %d case %d", SEED + 1, n).isEqualTo(1.0);
      }
      checked += plan.demand() > budget ? 1 : 0;
    }
    assertThat(checked).as("cases over budget, where hot could have stretched").isGreaterThan(150);
  }

  /** Up to 8 namespaces, up to 12 pools, up to {@code maxBackends} per class. */
  static List<PoolDemand> pools(Random random, int maxBackends) {
    int count = 1 + random.nextInt(12);
    int namespaces = 1 + random.nextInt(8);
    List<PoolDemand> pools = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long interval = pick(random);
      long fast = Math.min(interval, pick(random));
      long down = pick(random);
      long max = random.nextInt(5) == 0 ? interval : interval * (1 + random.nextInt(60));
      pools.add(
          new PoolDemand(
              "ns" + random.nextInt(namespaces),
              "pool" + i,
              new ClassCounts(
                  sometimes(random, maxBackends / 50),
                  sometimes(random, maxBackends),
                  sometimes(random, maxBackends),
                  sometimes(random, maxBackends)),
              fast,
              down,
              interval,
              max));
    }
    return pools;
  }

  /** Between a twentieth of the demand and twice it (log-uniform), at least 1. */
  static double budget(Random random, List<PoolDemand> pools) {
    double demand = pools.stream().mapToDouble(PoolDemand::rate).sum();
    return Math.max(1, demand * Math.exp(Math.log(0.05) + random.nextDouble() * Math.log(40)));
  }

  private static long pick(Random random) {
    return INTERVALS[random.nextInt(INTERVALS.length)];
  }

  private static int sometimes(Random random, int max) {
    return random.nextInt(3) == 0 ? 0 : random.nextInt(max + 1);
  }
}
