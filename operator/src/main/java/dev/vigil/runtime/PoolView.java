package dev.vigil.runtime;

import dev.vigil.budget.BudgetShare;
import dev.vigil.health.AvailabilitySnapshot;
import java.util.List;

/**
 * An immutable picture of one pool's runtime, handed from the pool's Vert.x context to reconcilers
 * on any thread. A new one is built only when something status or slices show changed.
 *
 * @param snapshot the decision core's published set and counts
 * @param backends every member, in id order
 * @param doubt whether this replica is Suspect while it decides the pool, and what it does then
 *     (docs/design.md §8)
 * @param budget the pool's part of this replica's probe budget (docs/design.md §9)
 */
public record PoolView(
    AvailabilitySnapshot snapshot,
    List<BackendSnapshot> backends,
    CheckerDoubt doubt,
    BudgetShare budget) {

  /** A view before the probe budget's first plan. */
  public PoolView(
      AvailabilitySnapshot snapshot, List<BackendSnapshot> backends, CheckerDoubt doubt) {
    this(snapshot, backends, doubt, BudgetShare.NONE);
  }

  /** A view decided by a replica that is not Suspect. */
  public PoolView(AvailabilitySnapshot snapshot, List<BackendSnapshot> backends) {
    this(snapshot, backends, CheckerDoubt.TRUSTED);
  }
}
