package dev.vigil.budget;

/**
 * The detection time a pool gets under its stretch (docs/design.md §9): the worst case from a kill
 * to Down is the longest stretched interval any of its backends waits before the first failing
 * probe, then {@code fall - 1} more probes at the stretched {@code hot} interval (a failing backend
 * is hot), and the last probe's timeout. Jitter is not in the figure (§9's formula): with {@code
 * jitterPercent} each of those waits may be longer by as much.
 */
public final class DetectionTime {
  private DetectionTime() {}

  /**
   * The reported {@code status.detection.effective}, in milliseconds: max over the pool's backends
   * of T_eff(b) + (fall - 1) x T_eff_hot + timeout. A pool without backends reports what a new
   * {@code normal} backend would get.
   */
  public static long effectiveMs(PoolDemand pool, ProbeStretch stretch, int fall, long timeoutMs) {
    double worst = 0;
    boolean any = false;
    for (ProbeClass c : ProbeClass.values()) {
      if (pool.counts().of(c) > 0) {
        worst = Math.max(worst, pool.intervalMs(c) * stretch.of(c));
        any = true;
      }
    }
    if (!any) {
      worst = pool.intervalMs(ProbeClass.NORMAL) * stretch.normal();
    }
    double hot = pool.intervalMs(ProbeClass.HOT) * stretch.hot();
    return Math.round(worst + (fall - 1) * hot) + timeoutMs;
  }

  /** The same with nothing stretched: what the policy asks for. */
  public static long wantedMs(PoolDemand pool, int fall, long timeoutMs) {
    return effectiveMs(pool, ProbeStretch.NONE, fall, timeoutMs);
  }
}
