package dev.vigil.ops;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Prober} that counts every probe by protocol, result and reason, and times it. Labels
 * come from closed sets (5 protocols, 2 results, {@link Reason}'s values), never from a backend or
 * pool, so the series count stays fixed however many backends are probed.
 */
public final class MeteredProber implements Prober {
  static final String PROBES = "vigil_probes";
  static final String DURATION = "vigil_probe_duration";

  /** Bucket bounds of the latency histogram: fast loopback answers up to a 10 s timeout. */
  static final Duration[] BUCKETS = {
    Duration.ofMillis(1),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10)
  };

  private record Key(String protocol, Reason reason) {}

  private record Meters(Counter count, Timer latency) {}

  private final Prober delegate;
  private final MeterRegistry registry;
  private final Map<Key, Meters> meters = new ConcurrentHashMap<>();

  public MeteredProber(Prober delegate, MeterRegistry registry) {
    this.delegate = delegate;
    this.registry = registry;
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    return delegate.probe(target, spec).onSuccess(result -> record(spec, result));
  }

  private void record(CheckSpec spec, ProbeResult result) {
    Meters m =
        meters.computeIfAbsent(new Key(spec.protocol().name(), result.reason()), this::create);
    m.count().increment();
    m.latency().record(Math.max(0, result.latencyMs()), TimeUnit.MILLISECONDS);
  }

  private Meters create(Key key) {
    String protocol = key.protocol().toLowerCase(Locale.ROOT);
    String result = key.reason() == Reason.OK ? "pass" : "fail";
    Counter count =
        Counter.builder(PROBES)
            .description("Active probes by protocol, result and reason")
            .tag("protocol", protocol)
            .tag("result", result)
            .tag("reason", key.reason().name().toLowerCase(Locale.ROOT))
            .register(registry);
    Timer latency =
        Timer.builder(DURATION)
            .description("Time from a probe's start to its verdict")
            .tag("protocol", protocol)
            .tag("result", result)
            .serviceLevelObjectives(BUCKETS)
            .register(registry);
    return new Meters(count, latency);
  }

  @Override
  public void forget(ProbeTarget target) {
    delegate.forget(target);
  }

  @Override
  public Future<Void> close() {
    return delegate.close();
  }
}
