package dev.vigil.runtime;

import dev.vigil.budget.BudgetPlan;
import dev.vigil.budget.BudgetShare;
import dev.vigil.budget.DetectionTime;
import dev.vigil.budget.PoolDemand;
import dev.vigil.budget.ProbeBudget;
import dev.vigil.budget.ProbeStretch;
import dev.vigil.health.HealthSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * This replica's probe budget at work (docs/design.md §9): once a second ({@link #replan}, on a
 * timer the wiring arms) it reads every pool's backends per class (counts each pool keeps in step,
 * no scan), plans with {@link ProbeBudget}, and hands each pool its stretch and the detection time
 * it gets. One plan a second, never one per probe: a class change waits for the next plan at most a
 * second to count (the backend itself follows its new class at once).
 */
public final class ProbeBudgets {
  private final double budget;
  private final Supplier<List<PoolRuntime>> pools;
  private volatile BudgetPlan last;

  /**
   * @param budget probes a second this replica may make ({@code --probe-budget}), > 0
   * @param pools this replica's pools
   */
  public ProbeBudgets(double budget, Supplier<List<PoolRuntime>> pools) {
    this.budget = budget;
    this.pools = pools;
    this.last = ProbeBudget.plan(budget, List.of());
  }

  /** Plans again and hands every pool its part; returns the plan. Any thread, one at a time. */
  public synchronized BudgetPlan replan() {
    List<PoolRuntime> runtimes = pools.get();
    List<PoolDemand> demands = new ArrayList<>(runtimes.size());
    for (PoolRuntime r : runtimes) {
      demands.add(demand(r));
    }
    BudgetPlan plan = ProbeBudget.plan(budget, demands);
    for (int i = 0; i < runtimes.size(); i++) {
      HealthSettings s = runtimes.get(i).settings();
      ProbeStretch stretch = plan.stretches().get(i);
      PoolDemand d = demands.get(i);
      runtimes
          .get(i)
          .share(
              new BudgetShare(
                  stretch,
                  plan.exceeded(),
                  DetectionTime.effectiveMs(d, stretch, s.fall(), s.timeoutMs()),
                  DetectionTime.wantedMs(d, s.fall(), s.timeoutMs())));
    }
    last = plan;
    return plan;
  }

  /** The latest plan (metrics); from any thread. */
  public BudgetPlan last() {
    return last;
  }

  private static PoolDemand demand(PoolRuntime r) {
    HealthSettings s = r.settings();
    return new PoolDemand(
        r.key().namespace(),
        r.key().name(),
        r.probeClasses(),
        s.fastIntervalMs(),
        s.downIntervalMs(),
        s.intervalMs(),
        s.maxIntervalMs());
  }
}
