package dev.vigil.budget;

import java.util.List;

/**
 * The probe budget's plan for one replica: each pool's stretch (in the order the pools were given),
 * and the figures metrics show.
 *
 * @param budget probes a second the replica may make ({@code --probe-budget})
 * @param demand probes a second every backend at its class's wanted interval would make
 * @param planned probes a second under the stretch
 * @param exceeded whether even {@code hot} had to stretch, or the budget could not be met with
 *     every other class at {@code maxInterval} (docs/design.md §9's last step)
 * @param stretches per pool, in the order of the demands
 * @param widest per class, the largest stretch of any pool with backends in that class
 */
public record BudgetPlan(
    double budget,
    double demand,
    double planned,
    boolean exceeded,
    List<ProbeStretch> stretches,
    ProbeStretch widest) {

  public BudgetPlan {
    stretches = List.copyOf(stretches);
  }
}
