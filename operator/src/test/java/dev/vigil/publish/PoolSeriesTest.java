package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.runtime.PoolKey;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The index of per-pool series, on the same composite registry the operator builds. */
class PoolSeriesTest {
  private final PrometheusMeterRegistry prometheus =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final SimpleMeterRegistry simple = new SimpleMeterRegistry();
  private final CompositeMeterRegistry registry =
      new CompositeMeterRegistry(Clock.SYSTEM, List.of(prometheus, simple));
  private final PoolSeries series = new PoolSeries(registry);
  private final PoolKey a = new PoolKey("tenant-a", "web");
  private final PoolKey b = new PoolKey("tenant-b", "web");

  @Test
  void removesOnlyThatPoolsSeriesFromEveryRegistryOfTheComposite() {
    registry.counter("vigil_outcomes_received_total").increment();
    for (PoolKey p : List.of(a, b)) {
      registry
          .counter("vigil_outcomes_accepted_total", "namespace", p.namespace(), "pool", p.name())
          .increment();
      registry
          .counter(
              "vigil_transitions_total",
              "namespace",
              p.namespace(),
              "pool",
              p.name(),
              "from",
              "up",
              "to",
              "down")
          .increment();
    }
    MultiGauge gauge = MultiGauge.builder("vigil_pool_available").register(registry);
    gauge.register(
        List.of(
            MultiGauge.Row.of(Tags.of("namespace", a.namespace(), "pool", a.name()), 1),
            MultiGauge.Row.of(Tags.of("namespace", b.namespace(), "pool", b.name()), 2)),
        true);
    assertThat(series.count(a)).isEqualTo(3);

    series.remove(a);

    assertThat(series.count(a)).isZero();
    assertThat(series.count(b)).isEqualTo(3);
    assertThat(simple.getMeters()).hasSize(4);
    assertThat(prometheus.scrape()).doesNotContain("tenant-a").contains("tenant-b");
    // the gauge's next refresh without pool a is harmless, with it the row comes back
    gauge.register(
        List.of(MultiGauge.Row.of(Tags.of("namespace", b.namespace(), "pool", b.name()), 2)), true);
    assertThat(simple.getMeters()).hasSize(4);
  }

  @Test
  void aPoolMadeAgainUnderTheSameNameIsTrackedAgain() {
    registry.counter("vigil_ejections_total", "namespace", a.namespace(), "pool", a.name());
    series.remove(a);
    registry.counter("vigil_ejections_total", "namespace", a.namespace(), "pool", a.name());

    assertThat(series.count(a)).isEqualTo(1);
    series.remove(a);
    assertThat(simple.getMeters()).isEmpty();
  }
}
