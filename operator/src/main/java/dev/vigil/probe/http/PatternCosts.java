package dev.vigil.probe.http;

import com.google.re2j.Pattern;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Runs the patterns of resources ({@code bodyMatch}, {@code headerMatch[].value}) and keeps what
 * each costs, so that no tenant's pattern can spend the probe event loops' time (issue 31). RE2/J
 * matches in time linear in the body, but the constant is the pattern's: {@code (.*a){12}$} takes
 * about 13 ms of CPU on a 4 KiB body and 90 ms on 64 KiB, and at ten probes a second a few such
 * pools fill every event loop again, delaying every other pool's probes past their timeouts.
 *
 * <p>Each match is timed in CPU time of its thread (not wall time: a preempted event loop does not
 * make a pattern look costly). A pattern whose matches cost more than {@link #LIMIT_NANOS} on
 * average (a moving average, the first match counting fully) is refused: for the next {@link
 * #RETRY_MS} its probes fail at once ({@code BODY_MISMATCH}, {@code HEADER_MISMATCH}) with a detail
 * naming the cost, without matching; then one probe matches again and measures anew. A simple
 * pattern on a 64 KiB body costs well under 0.5 ms. Costs are kept per pattern text (every policy
 * with the same pattern shares them), at most {@link #MAX_PATTERNS}.
 *
 * <p>Thread-safe: the event loops of one prober share it.
 */
final class PatternCosts {
  /** The average CPU a match may cost. */
  static final long LIMIT_NANOS = 2_000_000;

  /** How long a refused pattern is not run. */
  static final long RETRY_MS = 30_000;

  static final int MAX_PATTERNS = 4_096;

  private static final double WEIGHT = 0.3; // of the newest match in the average

  /** A match's outcome; {@code refusal} says why a refused pattern did not run. */
  record Found(boolean found, String refusal) {
    static final Found YES = new Found(true, null);
    static final Found NO = new Found(false, null);

    boolean refused() {
      return refusal != null;
    }
  }

  /** One pattern's cost; guarded by itself. */
  private static final class Cost {
    double averageNanos = -1;
    long refusedUntilMs = Long.MIN_VALUE;
  }

  private final Map<String, Cost> costs = new ConcurrentHashMap<>();
  private final LongSupplier cpuNanos;
  private final LongSupplier clockMs;

  /**
   * @param cpuNanos the calling thread's CPU time, nanoseconds
   * @param clockMs wall time, milliseconds
   */
  PatternCosts(LongSupplier cpuNanos, LongSupplier clockMs) {
    this.cpuNanos = cpuNanos;
    this.clockMs = clockMs;
  }

  /** Timed with the calling thread's CPU time where the JVM measures it, else wall time. */
  static PatternCosts measuringThreadCpu() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    LongSupplier cpu =
        threads.isCurrentThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled()
            ? threads::getCurrentThreadCpuTime
            : System::nanoTime;
    return new PatternCosts(cpu, System::currentTimeMillis);
  }

  /** Whether {@code pattern} is found in {@code text}, unless its cost has it refused. */
  Found find(Pattern pattern, CharSequence text) {
    Cost cost = cost(pattern);
    long now = clockMs.getAsLong();
    synchronized (cost) {
      if (now < cost.refusedUntilMs) {
        return refusal(cost);
      }
      if (cost.averageNanos > LIMIT_NANOS) {
        // a refused pattern's one trial: the other loops keep refusing it while it runs
        cost.refusedUntilMs = now + RETRY_MS;
      }
    }
    long before = cpuNanos.getAsLong();
    boolean found = pattern.matcher(text).find();
    long spent = Math.max(0, cpuNanos.getAsLong() - before);
    synchronized (cost) {
      cost.averageNanos =
          cost.averageNanos < 0 ? spent : (1 - WEIGHT) * cost.averageNanos + WEIGHT * spent;
      cost.refusedUntilMs = cost.averageNanos > LIMIT_NANOS ? now + RETRY_MS : Long.MIN_VALUE;
    }
    return found ? Found.YES : Found.NO;
  }

  private Cost cost(Pattern pattern) {
    Cost cost = costs.get(pattern.pattern());
    if (cost != null) {
      return cost;
    }
    if (costs.size() >= MAX_PATTERNS) {
      costs.clear(); // patterns come from policies: this many means churn; start measuring afresh
    }
    return costs.computeIfAbsent(pattern.pattern(), p -> new Cost());
  }

  private static Found refusal(Cost cost) {
    return new Found(
        false,
        String.format(
            "not run: it costs %.1f ms of CPU a match on this answer (limit %d ms);"
                + " tried again every %d s",
            cost.averageNanos / 1e6, LIMIT_NANOS / 1_000_000, RETRY_MS / 1000));
  }
}
