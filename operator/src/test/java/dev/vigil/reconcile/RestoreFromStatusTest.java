package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.health.ActiveState;
import dev.vigil.health.DampingState;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.RestoredBackend;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RestoreFromStatusTest {
  private static final long NOW = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

  private static EndpointSlice slice(Object[]... endpoints) {
    EndpointSliceBuilder b =
        new EndpointSliceBuilder().withNewMetadata().withName("web-vigil-0").endMetadata();
    for (Object[] e : endpoints) {
      b.addToEndpoints(
          new EndpointBuilder()
              .withAddresses("10.0.0." + e[0])
              .withNewTargetRef()
              .withName((String) e[1])
              .endTargetRef()
              .withNewConditions()
              .withReady((Boolean) e[2])
              .withServing((Boolean) e[3])
              .withTerminating((Boolean) e[4])
              .endConditions()
              .build());
    }
    return b.build();
  }

  private static BackendStatus backend(
      String pod, dev.vigil.api.v1alpha1.BackendState state, Integer ejections, String until) {
    BackendStatus b = new BackendStatus();
    b.setPod(pod);
    b.setState(state);
    b.setEjections(ejections);
    b.setEjectedUntil(until);
    return b;
  }

  @Test
  void slicesGiveUpOrDownAndATerminatingEndpointsServingIsItsHealth() {
    Map<String, RestoredBackend> r =
        RestoreFromStatus.restore(
            null,
            List.of(
                slice(
                    new Object[] {1, "a", true, true, false},
                    new Object[] {2, "b", false, false, false},
                    new Object[] {3, "c", false, true, true})),
            NOW);

    assertThat(r.get("a").state()).isEqualTo(ActiveState.UP);
    assertThat(r.get("b").state()).isEqualTo(ActiveState.DOWN);
    assertThat(r.get("c").state()).as("draining but healthy").isEqualTo(ActiveState.UP);
  }

  @Test
  void aTargetsEndpointHasNoTargetRefAndIsRestoredByItsAddress() {
    EndpointSlice targets =
        new EndpointSliceBuilder()
            .withNewMetadata()
            .withName("db-vigil-0")
            .endMetadata()
            .addToEndpoints(
                new EndpointBuilder()
                    .withAddresses("192.0.2.10")
                    .withNewConditions()
                    .withReady(false)
                    .withServing(false)
                    .withTerminating(false)
                    .endConditions()
                    .build())
            .build();
    Map<String, RestoredBackend> r = RestoreFromStatus.restore(null, List.of(targets), NOW);
    assertThat(r.get("192.0.2.10").state()).isEqualTo(ActiveState.DOWN);
  }

  @Test
  void aBackendInMaintIsInNoSliceAndItsNextProbeDecides() {
    BackendPoolStatus status = new BackendPoolStatus();
    status.setBackends(List.of(backend("m", dev.vigil.api.v1alpha1.BackendState.MAINT, 1, null)));
    Map<String, RestoredBackend> r = RestoreFromStatus.restore(status, List.of(), NOW);
    assertThat(r.get("m").state()).isEqualTo(ActiveState.UNKNOWN);
    assertThat(r.get("m").ejections()).isEqualTo(1);
  }

  @Test
  void statusGivesEjectionsTheirEndAndDamping() {
    BackendPoolStatus status = new BackendPoolStatus();
    BackendStatus damped = backend("d", dev.vigil.api.v1alpha1.BackendState.DAMPED, 0, null);
    damped.setMerit(2500.0);
    damped.setMeritTime("2025-12-31T23:59:59Z");
    damped.setDampedUntil("2026-01-01T00:01:00Z");
    status.setBackends(
        List.of(
            backend("a", dev.vigil.api.v1alpha1.BackendState.EJECTED, 2, "2026-01-01T00:00:30Z"),
            backend("b", dev.vigil.api.v1alpha1.BackendState.UP, 1, "2025-12-31T23:00:00Z"),
            backend("c", dev.vigil.api.v1alpha1.BackendState.DRAINING, 0, null),
            damped,
            backend("e", dev.vigil.api.v1alpha1.BackendState.UP, 0, null)));

    Map<String, RestoredBackend> r =
        RestoreFromStatus.restore(
            status, List.of(slice(new Object[] {3, "c", false, false, true})), NOW);

    assertThat(r.get("a"))
        .isEqualTo(
            new RestoredBackend(
                ActiveState.UP, 2, Instant.parse("2026-01-01T00:00:30Z").toEpochMilli()));
    assertThat(r.get("b"))
        .as("an ejection that already ended")
        .isEqualTo(new RestoredBackend(ActiveState.UP, 1, 0));
    assertThat(r.get("c").state()).as("draining: the slice's serving").isEqualTo(ActiveState.DOWN);
    assertThat(r.get("d").damping())
        .isEqualTo(
            new DampingState(2500.0, Instant.parse("2025-12-31T23:59:59Z").toEpochMilli(), true));
    assertThat(r.get("e").ejections())
        .as("a multiplier that decayed to 0 (status now says so) is restored as 0")
        .isZero();
  }

  @Test
  void statusGivesTheTimeOfTheLastChangeSoTheNextOwnerWritesTheSameStatus() {
    BackendPoolStatus status = new BackendPoolStatus();
    BackendStatus up = backend("a", dev.vigil.api.v1alpha1.BackendState.UP, 0, null);
    up.setSince("2025-12-31T22:00:00Z");
    status.setBackends(
        List.of(up, backend("b", dev.vigil.api.v1alpha1.BackendState.DOWN, 0, null)));

    Map<String, RestoredBackend> r = RestoreFromStatus.restore(status, List.of(), NOW);

    assertThat(r.get("a").since()).isEqualTo(Instant.parse("2025-12-31T22:00:00Z").toEpochMilli());
    assertThat(r.get("b").since()).as("no time in status: unknown").isZero();
  }

  /** The voters' answers survive a restart or a move, so the next owner's status keeps them. */
  @Test
  void statusGivesTheVotesOnTheLastDownAndNoneWhenItShowsNone() {
    BackendPoolStatus status = new BackendPoolStatus();
    BackendStatus asked = backend("a", dev.vigil.api.v1alpha1.BackendState.UP, 0, null);
    asked.setConfirmedBy(List.of());
    asked.setRefutedBy(List.of("zone-b"));
    asked.setAbstained(List.of("zone-c"));
    status.setBackends(
        List.of(asked, backend("b", dev.vigil.api.v1alpha1.BackendState.UP, 0, null)));

    Map<String, RestoredBackend> r = RestoreFromStatus.restore(status, List.of(), NOW);

    assertThat(r.get("a").votes())
        .isEqualTo(new Confirmer.Votes(List.of(), List.of("zone-b"), List.of("zone-c")));
    assertThat(r.get("b").votes()).isNull();
  }
}
