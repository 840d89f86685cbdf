package dev.vigil.publish;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.HealthPolicyStatus;
import dev.vigil.runtime.PoolView;
import java.time.Instant;
import java.util.List;

/** Builds a HealthPolicy's status: whether it is accepted, and the sum of the pools using it. */
public final class PolicyStatusAggregator {
  private PolicyStatusAggregator() {}

  /**
   * @param invalid the validation message naming the first bad field, or null when valid
   * @param pools how many pools name this policy
   * @param views the runtime views of those pools that have one
   */
  public static HealthPolicyStatus build(
      Long generation,
      String invalid,
      int pools,
      List<PoolView> views,
      HealthPolicyStatus previous,
      long nowMs) {
    HealthPolicyStatus status = new HealthPolicyStatus();
    status.setObservedGeneration(generation);
    ConditionSet conditions =
        new ConditionSet(
            previous == null ? null : previous.getConditions(),
            Instant.ofEpochMilli(nowMs).toString(),
            generation);
    if (invalid == null) {
      conditions.set(Conditions.ACCEPTED, true, Conditions.VALID, "the policy is valid");
    } else {
      conditions.set(Conditions.ACCEPTED, false, Conditions.INVALID_POLICY, invalid);
    }
    int backends = 0;
    int available = 0;
    int panicking = 0;
    for (PoolView v : views) {
      backends += v.snapshot().counts().total();
      available += v.snapshot().counts().available();
      panicking += v.snapshot().panic() ? 1 : 0;
    }
    return withTotals(status, conditions, pools, backends, available, panicking);
  }

  /**
   * Sharded (docs/scale.md): the aggregate of the pools' own statuses, which every replica reads
   * alike from its informer, so the replicas write the same policy status instead of each its own
   * share.
   */
  public static HealthPolicyStatus fromPoolStatuses(
      Long generation,
      String invalid,
      List<dev.vigil.api.v1alpha1.BackendPoolStatus> pools,
      HealthPolicyStatus previous,
      long nowMs) {
    HealthPolicyStatus status =
        build(generation, invalid, pools.size(), List.of(), previous, nowMs);
    int backends = 0;
    int available = 0;
    int panicking = 0;
    for (var p : pools) {
      if (p != null) {
        backends += p.getTotal() == null ? 0 : p.getTotal();
        available += p.getAvailable() == null ? 0 : p.getAvailable();
        panicking += Boolean.TRUE.equals(p.getPanic()) ? 1 : 0;
      }
    }
    status.setBackends(backends);
    status.setAvailable(available);
    status.setPanicking(panicking);
    status.setAvailability(available + "/" + backends);
    return status;
  }

  private static HealthPolicyStatus withTotals(
      HealthPolicyStatus status,
      ConditionSet conditions,
      int pools,
      int backends,
      int available,
      int panicking) {
    status.setPools(pools);
    status.setBackends(backends);
    status.setAvailable(available);
    status.setPanicking(panicking);
    status.setAvailability(available + "/" + backends);
    status.setConditions(conditions.build());
    return status;
  }
}
