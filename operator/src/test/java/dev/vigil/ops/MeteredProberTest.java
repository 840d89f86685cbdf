package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.Test;

class MeteredProberTest {

  @Test
  void countsByProtocolResultAndReasonAndTimesEachProbe() {
    Deque<ProbeResult> results = new ArrayDeque<>();
    results.add(ProbeResult.pass("status 200", 12));
    results.add(ProbeResult.timeout(2000));
    results.add(ProbeResult.timeout(2000));
    Prober fake = (target, spec) -> Future.succeededFuture(results.poll());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MeteredProber prober = new MeteredProber(fake, registry);
    CheckSpec spec = CheckSpec.builder().protocol(dev.vigil.probe.ProbeProtocol.TCP).build();
    ProbeTarget target = new ProbeTarget("127.0.0.1", 1);

    for (int i = 0; i < 3; i++) {
      prober.probe(target, spec);
    }

    assertThat(registry.get(MeteredProber.PROBES).tag("reason", "ok").counter().count())
        .isEqualTo(1);
    assertThat(
            registry
                .get(MeteredProber.PROBES)
                .tags("protocol", "tcp", "result", "fail", "reason", "timeout")
                .counter()
                .count())
        .isEqualTo(2);
    assertThat(registry.get(MeteredProber.DURATION).tag("result", "fail").timer().count())
        .isEqualTo(2);
    assertThat(Reason.values()).hasSizeLessThan(32);
  }
}
