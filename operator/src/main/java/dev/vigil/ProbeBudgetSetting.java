package dev.vigil;

import java.util.function.Function;

/**
 * {@code --probe-budget}: probes a second one replica may make before the probe budget stretches
 * intervals (docs/design.md §9). Without the flag, {@value #PER_CORE} probes a second per core of
 * the container's CPU limit ({@code --cpu-limit-millis}, which the chart sets from the Pod's
 * limit), else per processor the JVM sees. A measure-free starting point, not a measurement: issue
 * 15's ramp sustained about 9,000 HTTP probes a second per core on a quiet machine (18,000 a second
 * on 2 cores, ProbeScheduler.MAX_BACKLOG), so a quarter of that leaves room for TLS, gRPC and the
 * rest of the operator; raise it where {@code vigil_probe_budget_*} shows headroom.
 */
final class ProbeBudgetSetting {
  /** Probes a second per core by default. */
  static final double PER_CORE = 2_000;

  private ProbeBudgetSetting() {}

  /** The budget from the flags ({@code get} by flag name), with its default. */
  static double parse(Function<String, String> get) {
    String budget = get.apply("probe-budget");
    if (budget != null && !budget.isBlank()) {
      return positive("--probe-budget", budget);
    }
    String millis = get.apply("cpu-limit-millis");
    if (millis != null && !millis.isBlank()) {
      return PER_CORE * positive("--cpu-limit-millis", millis) / 1000.0;
    }
    return forThisMachine();
  }

  /** {@value #PER_CORE} per processor the JVM sees (its container's limit, rounded up). */
  static double forThisMachine() {
    return PER_CORE * Runtime.getRuntime().availableProcessors();
  }

  private static double positive(String flag, String v) {
    try {
      double d = Double.parseDouble(v.trim());
      if (d > 0 && Double.isFinite(d)) {
        return d;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new OperatorConfig.InvalidConfigException(flag + " must be a positive number, got " + v);
  }
}
