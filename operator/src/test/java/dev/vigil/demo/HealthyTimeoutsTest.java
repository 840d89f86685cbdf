package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.BackendView;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolView;
import dev.vigil.runtime.ProbeSummary;
import dev.vigil.testing.Fixtures;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A failed demo run whose healthy backends timed out says to lower --speed; others do not. */
class HealthyTimeoutsTest {
  private static Observation probed(String pod, ProbeSummary probe) {
    BackendView up = Fixtures.upBackend(pod);
    PoolView view =
        new PoolView(
            new AvailabilitySnapshot(
                1,
                false,
                Set.of(pod),
                Set.of(pod),
                Set.of(),
                new AvailabilitySnapshot.Counts(1, 1, 1, 0, 0, 0, 0, 1, 0)),
            List.of(
                new BackendSnapshot(
                    Member.of(pod, "u", "10.0.0.1", 8080, null, null, false, false, List.of()),
                    up,
                    true,
                    true,
                    0,
                    probe,
                    null,
                    null,
                    List.of())));
    return new Observation(0, Map.of(), null, List.of(), view, 0);
  }

  @Test
  void timeoutsOfHealthyBackendsAreCountedOncePerProbeAndGiveAdvice() {
    HealthyTimeouts t = new HealthyTimeouts(pod -> pod.equals("web-0"));
    ProbeSummary timedOut = new ProbeSummary(1_000, false, 150, "timeout");
    t.observe(probed("web-0", timedOut));
    t.observe(probed("web-0", timedOut));
    t.observe(probed("web-0", new ProbeSummary(1_200, false, 150, "timeout")));
    assertThat(t.count()).isEqualTo(2);
    assertThat(t.advice(10, 75))
        .startsWith("2 probes of backends that were healthy timed out (timeout 75ms at --speed 10)")
        .contains("Run again with a lower --speed (e.g. --speed 5)");
    assertThat(t.advice(1, 500)).contains("--speed 0.5");
  }

  @Test
  void timeoutsOfBackendsMadeToHangAndOtherFailuresAreNotTheMachines() {
    HealthyTimeouts t = new HealthyTimeouts(pod -> pod.equals("web-0"));
    t.observe(probed("web-1", new ProbeSummary(1_000, false, 150, "timeout")));
    t.observe(probed("web-0", new ProbeSummary(1_000, false, 3, "connection refused")));
    t.observe(probed("web-0", new ProbeSummary(1_100, true, 3, null)));
    assertThat(t.count()).isZero();
    assertThat(t.advice(10, 75)).isNull();
  }
}
