package dev.vigil.ops;

import dev.vigil.budget.BudgetPlan;
import dev.vigil.budget.ProbeClass;
import dev.vigil.runtime.ProbeBudgets;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The probe budget's gauges (docs/metrics.md), read from its latest plan: the budget, the demand,
 * the planned rate, the stretch per class, and whether the plan reached its last step. Five series
 * and four for the classes, whatever the number of pools.
 */
public final class ProbeBudgetGauges {
  static final String BUDGET = "vigil_probe_budget_probes_per_second";
  static final String DEMAND = "vigil_probe_budget_demand_probes_per_second";
  static final String PLANNED = "vigil_probe_budget_planned_probes_per_second";
  static final String STRETCH = "vigil_probe_budget_stretch";
  static final String EXCEEDED = "vigil_probe_budget_exceeded";

  private ProbeBudgetGauges() {}

  /** Registers the gauges; {@code budgets} is held strongly (nothing else may hold it). */
  public static void register(MeterRegistry registry, ProbeBudgets budgets) {
    gauge(
        registry,
        budgets,
        BUDGET,
        "Probes a second this replica may make (--probe-budget)",
        BudgetPlan::budget);
    gauge(
        registry,
        budgets,
        DEMAND,
        "Probes a second this replica's backends ask for at their classes' wanted intervals",
        BudgetPlan::demand);
    gauge(
        registry,
        budgets,
        PLANNED,
        "Probes a second this replica makes under the probe budget's stretch",
        BudgetPlan::planned);
    gauge(
        registry,
        budgets,
        EXCEEDED,
        "1 while even hot backends stretch (or every other class is at maxInterval and the budget"
            + " is still exceeded), else 0",
        p -> p.exceeded() ? 1 : 0);
    for (ProbeClass c : ProbeClass.values()) {
      Gauge.builder(STRETCH, budgets, b -> b.last().widest().of(c))
          .strongReference(true)
          .description(
              "The largest factor any pool's interval of this class is stretched by (1: none)")
          .tag("class", c.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  private static void gauge(
      MeterRegistry registry,
      ProbeBudgets budgets,
      String name,
      String description,
      ToDoubleFunction<BudgetPlan> value) {
    Gauge.builder(name, budgets, b -> value.applyAsDouble(b.last()))
        .strongReference(true)
        .description(description)
        .register(registry);
  }
}
