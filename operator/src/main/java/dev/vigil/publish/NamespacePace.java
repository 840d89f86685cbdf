package dev.vigil.publish;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * A cap on one namespace's writes that holds whoever else waits ({@code --namespace-write-qps}):
 * the write budget's turns divide the operator's budget fairly, but a namespace alone may take all
 * of it, and what its writes cost the API server slows every tenant's writes there (issue 31,
 * docs/tenancy.md). The cap is not work-conserving on purpose: a namespace gets at most {@code
 * perSecond} lane runs a second, {@code burst} at once after a quiet spell, even when the budget
 * has tokens to spare.
 *
 * <p>Generic cell rate (a token bucket kept as the time its line is theoretically free, {@code
 * freeAt}): a run asked for at {@code earliest} starts at {@code max(earliest, freeAt - burst *
 * gap)}, and moves {@code freeAt} one gap on. A start is reserved when asked for, so a lane asks
 * once per run it queues and the reservations of one namespace are served in the order asked. Pure:
 * time is passed in; thread-safe.
 */
public final class NamespacePace {
  /** Remembered namespaces above which lines already free are dropped. */
  private static final int PRUNE_ABOVE = 1024;

  /** The next size that prunes: twice what the last pruning kept, so pruning costs O(1) a call. */
  private int pruneAt = PRUNE_ABOVE;

  private final double gapMs;
  private final double toleranceMs;
  private final Map<String, double[]> freeAt = new HashMap<>();

  /**
   * @param perSecond runs per second one namespace may start, > 0
   * @param burst runs one namespace may start at once after a quiet spell, >= 1
   */
  NamespacePace(double perSecond, int burst) {
    if (!(perSecond > 0) || burst < 1) {
      throw new IllegalArgumentException("rate must be > 0 and burst >= 1");
    }
    this.gapMs = 1000.0 / perSecond;
    this.toleranceMs = gapMs * (burst - 1);
  }

  /**
   * The cap {@code --namespace-write-qps} asks for: {@code perSecond} runs a second, two seconds'
   * worth at once; none at 0.
   */
  public static NamespacePace perSecond(double perSecond) {
    return perSecond > 0
        ? new NamespacePace(perSecond, (int) Math.min(100_000, Math.ceil(2 * perSecond)))
        : unlimited();
  }

  /** No cap: every run starts when asked ({@code --namespace-write-qps 0}). */
  public static NamespacePace unlimited() {
    return new NamespacePace(Double.POSITIVE_INFINITY, 1);
  }

  /** Whether this pace ever delays a run. */
  boolean caps() {
    return gapMs > 0;
  }

  /**
   * Reserves the next start of a run of {@code namespace} not before {@code earliestMs}.
   *
   * @return when it may start (ms, the caller's clock): {@code earliestMs} unless the namespace is
   *     over its cap
   */
  synchronized long reserve(String namespace, long earliestMs, long nowMs) {
    if (!caps()) {
      return earliestMs;
    }
    if (freeAt.size() > pruneAt) {
      prune(nowMs);
      pruneAt = Math.max(PRUNE_ABOVE, 2 * freeAt.size());
    }
    double[] line = freeAt.computeIfAbsent(namespace, n -> new double[] {earliestMs});
    double start = Math.max(earliestMs, line[0] - toleranceMs);
    line[0] = Math.max(line[0], start) + gapMs;
    return (long) Math.ceil(start);
  }

  /** Gives back one reserved run that wrote nothing: the namespace's next run may start earlier. */
  synchronized void refund(String namespace, long nowMs) {
    if (!caps()) {
      return;
    }
    double[] line = freeAt.get(namespace);
    if (line != null) {
      line[0] = Math.max(nowMs, line[0] - gapMs);
    }
  }

  /** Namespaces remembered (for tests of the memory bound). */
  synchronized int size() {
    return freeAt.size();
  }

  private void prune(long nowMs) {
    for (Iterator<double[]> it = freeAt.values().iterator(); it.hasNext(); ) {
      if (it.next()[0] <= nowMs) {
        it.remove(); // free now: a new line starts the same
      }
    }
  }
}
