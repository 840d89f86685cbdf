package dev.vigil.publish;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.DetectionStatus;
import dev.vigil.budget.BudgetShare;
import dev.vigil.runtime.PoolView;

/**
 * What a pool's status shows of the probe budget (docs/design.md §9): {@code status.detection} and
 * the {@code ProbeBudgetExceeded} condition. Pure, as {@link PoolStatusAggregator}.
 */
final class BudgetStatus {
  private BudgetStatus() {}

  /**
   * Sets {@code status.detection} and the condition from the view's share. Until the budget's first
   * plan reaches the pool (a new runtime, a pool just taken over) the previous status' detection
   * stays: a new owner restores a pool's status unchanged, and writes nothing for it.
   */
  static void apply(
      BackendPoolStatus status,
      ConditionSet conditions,
      PoolView view,
      BackendPoolStatus previous) {
    BudgetShare share = view == null ? BudgetShare.NONE : view.budget();
    if (share.effectiveMs() >= 0) {
      status.setDetection(
          new DetectionStatus(duration(share.effectiveMs()), duration(share.wantedMs())));
    } else if (previous != null) {
      status.setDetection(previous.getDetection());
    }
    if (share.exceeded()) {
      conditions.set(
          Conditions.PROBE_BUDGET_EXCEEDED,
          true,
          Conditions.HOT_STRETCHED,
          "this replica is asked for more probes a second than --probe-budget even with every"
              + " interval but those of backends in transition at maxInterval; detection now takes"
              + " up to "
              + duration(share.effectiveMs())
              + " (policy: "
              + duration(share.wantedMs())
              + "): raise --probe-budget, add replicas, or lengthen intervals");
    } else {
      conditions.set(
          Conditions.PROBE_BUDGET_EXCEEDED,
          false,
          Conditions.WITHIN_BUDGET,
          share.effectiveMs() > share.wantedMs()
              ? "quiet, normal or down intervals stretch under the probe budget; backends in"
                  + " transition keep their rate"
              : "no interval stretches");
    }
  }

  /** A duration as a Kubernetes user reads one: 950ms, 3.3s, 12s. */
  static String duration(long ms) {
    if (ms < 1000) {
      return ms + "ms";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    String s = String.format(java.util.Locale.ROOT, "%.3f", ms / 1000.0);
    s = s.replaceAll("0+$", "");
    return s + "s";
  }
}
