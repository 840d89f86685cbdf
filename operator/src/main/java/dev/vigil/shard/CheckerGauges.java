package dev.vigil.shard;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;

/** This replica's gauges as a checker (docs/design.md §8; docs/metrics.md lists them). */
public final class CheckerGauges {
  /** The failing share over the last minute, as the shard Lease carries it. */
  public static final String FAILING_SHARE = "vigil_checker_failing_share";

  /** 1 while this replica is Suspect by its Lease against the other live replicas', else 0. */
  public static final String SUSPECT = "vigil_checker_suspect";

  private CheckerGauges() {}

  /**
   * Registers both gauges. Micrometer holds a gauge's object weakly unless told otherwise, and the
   * suppliers passed here (method references made at the call) have no other holder: they are held
   * strongly, or the first garbage collection turns both gauges into NaN.
   */
  public static void register(
      MeterRegistry registry, String shard, DoubleSupplier share, BooleanSupplier suspect) {
    Gauge.builder(FAILING_SHARE, share, DoubleSupplier::getAsDouble)
        .strongReference(true)
        .description(
            "Share of this replica's probed backends whose last probe failed, over the last 60 s")
        .tag("shard", shard)
        .register(registry);
    Gauge.builder(SUSPECT, suspect, s -> s.getAsBoolean() ? 1 : 0)
        .strongReference(true)
        .description(
            "1 while this replica doubts its own probes (failing share >= 0.30 and >= 3 x the"
                + " other live replicas' median), else 0")
        .tag("shard", shard)
        .register(registry);
  }
}
