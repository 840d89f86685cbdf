package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.probe.ManualTimers;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.NoProbes;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.TransitionSink;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The per-pool probing series of {@link PoolGauges}: lanes and deferred starts are read from each
 * pool's runtime at every refresh, a pool created again under the same name gets a counter of its
 * own, and a deleted pool's series go.
 */
class PoolGaugesTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<PoolRuntime> pools = new ArrayList<>();
  private final PoolGauges gauges = new PoolGauges(() -> List.copyOf(pools), registry);

  /** A pool whose probing reports {@code deferred} and {@code lanes}. */
  private static PoolRuntime pool(String name, AtomicLong deferred, int lanes) {
    return new PoolRuntime(
        new PoolKey("shop", name),
        new ManualTimers(),
        HealthSettings.builder().intervalMs(1_000).timeoutMs(500).build(),
        callback ->
            new NoProbes() {
              @Override
              public long deferredStarts() {
                return deferred.get();
              }

              @Override
              public long heldStarts() {
                return 10 * deferred.get(); // a number of its own, from the same source
              }

              @Override
              public int lanes() {
                return lanes;
              }
            },
        p -> {},
        TransitionSink.NONE,
        Confirmer.ALONE,
        () -> 0L);
  }

  private Double deferred(String name) {
    FunctionCounter c =
        registry
            .find(PoolGauges.DEFERRED)
            .tags("namespace", "shop", "pool", name)
            .functionCounter();
    return c == null ? null : c.count();
  }

  private Double held(String name) {
    FunctionCounter c =
        registry.find(PoolGauges.HELD).tags("namespace", "shop", "pool", name).functionCounter();
    return c == null ? null : c.count();
  }

  private Double lanes(String name) {
    Gauge g = registry.find(PoolGauges.LANES).tags("namespace", "shop", "pool", name).gauge();
    return g == null ? null : g.value();
  }

  @Test
  void lanesAndDeferredStartsFollowEachPoolsRuntime() {
    AtomicLong webDeferred = new AtomicLong(3);
    pools.add(pool("web", webDeferred, 2));
    pools.add(pool("api", new AtomicLong(0), 1));
    gauges.refresh();

    assertThat(lanes("web")).isEqualTo(2.0);
    assertThat(lanes("api")).isEqualTo(1.0);
    assertThat(deferred("web")).isEqualTo(3.0);
    assertThat(deferred("api")).isZero();

    webDeferred.set(40); // read at scrape time, no refresh needed for a counter's value
    assertThat(deferred("web")).isEqualTo(40.0);
    assertThat(held("web")).isEqualTo(400.0);

    // "web" deleted and created again: a new runtime, a counter of its own from 0
    pools.set(0, pool("web", new AtomicLong(1), 1));
    gauges.refresh();
    assertThat(deferred("web")).isEqualTo(1.0);
    assertThat(lanes("web")).isEqualTo(1.0);
    assertThat(registry.find(PoolGauges.DEFERRED).functionCounters()).hasSize(2);
    assertThat(registry.find(PoolGauges.HELD).functionCounters()).hasSize(2);

    // "api" deleted: its series go at the next refresh
    pools.remove(1);
    gauges.refresh();
    assertThat(deferred("api")).isNull();
    assertThat(held("api")).isNull();
    assertThat(lanes("api")).isNull();
    assertThat(deferred("web")).isEqualTo(1.0);
  }
}
