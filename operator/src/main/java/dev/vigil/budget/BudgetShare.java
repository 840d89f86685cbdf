package dev.vigil.budget;

/**
 * One pool's part of the replica's probe plan, as its status shows it.
 *
 * @param stretch how far each class's interval stretches
 * @param exceeded whether the replica's plan reached its last step ({@link BudgetPlan#exceeded})
 * @param effectiveMs the detection time under the stretch ({@link DetectionTime#effectiveMs}); -1
 *     before the first plan
 * @param wantedMs the detection time the policy asks for (nothing stretched); -1 before the first
 *     plan
 */
public record BudgetShare(ProbeStretch stretch, boolean exceeded, long effectiveMs, long wantedMs) {
  /** Before the first plan: nothing stretched, nothing reported. */
  public static final BudgetShare NONE = new BudgetShare(ProbeStretch.NONE, false, -1, -1);

  /**
   * Whether status should show {@code next} instead of this: the condition flipped, or the reported
   * detection time moved by more than a twentieth (a stretch that floats with demand every second
   * must not become a status write every second).
   */
  public boolean shownDiffers(BudgetShare next) {
    return exceeded != next.exceeded
        || wantedMs != next.wantedMs
        || Math.abs(next.effectiveMs - effectiveMs) * 20 > Math.max(1, effectiveMs);
  }
}
