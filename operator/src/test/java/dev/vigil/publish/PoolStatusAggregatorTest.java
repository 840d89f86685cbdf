package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.BackendHold;
import dev.vigil.health.BackendView;
import dev.vigil.publish.PoolStatusAggregator.Problem;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.CheckerDoubt;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolView;
import dev.vigil.runtime.ProbeSummary;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class PoolStatusAggregatorTest {
  private static final long NOW = 1_700_000_000_000L;

  private static BackendSnapshot backend(
      String id, dev.vigil.health.ActiveState state, boolean ejected, boolean draining) {
    boolean available = state == dev.vigil.health.ActiveState.UP && !ejected && !draining;
    return new BackendSnapshot(
        Member.of(
            id,
            "uid-" + id,
            "10.0.0." + id.hashCode() % 200,
            8080,
            "n1",
            null,
            draining,
            false,
            List.of()),
        new BackendView(
            id,
            state,
            0,
            0,
            0,
            0,
            ejected ? 1 : 0,
            ejected,
            ejected ? NOW + 30_000 : 0,
            draining,
            available,
            false,
            0,
            0,
            0,
            BackendHold.NONE),
        available,
        available,
        NOW - 5_000,
        new ProbeSummary(NOW - 100, available, 3, available ? "ok" : "status 503"),
        null,
        null,
        List.of());
  }

  private static PoolView view(boolean panic, List<BackendSnapshot> backends) {
    Set<String> available =
        backends.stream()
            .filter(b -> b.decision().available())
            .map(b -> b.member().id())
            .collect(Collectors.toSet());
    int down =
        (int)
            backends.stream()
                .filter(b -> b.decision().state() == dev.vigil.health.ActiveState.DOWN)
                .count();
    int ejected = (int) backends.stream().filter(b -> b.decision().ejected()).count();
    int draining = (int) backends.stream().filter(b -> b.decision().draining()).count();
    int decided = backends.size() - draining;
    return new PoolView(
        new AvailabilitySnapshot(
            1,
            panic,
            available,
            panic ? Set.copyOf(backends.stream().map(b -> b.member().id()).toList()) : available,
            Set.of(),
            new AvailabilitySnapshot.Counts(
                backends.size(),
                available.size(),
                backends.size() - down,
                down,
                0,
                ejected,
                draining,
                decided,
                0)),
        backends);
  }

  private static Condition condition(BackendPoolStatus s, String type) {
    return s.getConditions().stream()
        .filter(c -> c.getType().equals(type))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void countsAvailabilityAndConditionsOfAHealthyPool() {
    PoolView v =
        view(
            false,
            List.of(
                backend("a", dev.vigil.health.ActiveState.UP, false, false),
                backend("b", dev.vigil.health.ActiveState.UP, false, false)));

    BackendPoolStatus s = PoolStatusAggregator.build(3L, "fast", v, null, null, NOW);

    assertThat(s.getObservedGeneration()).isEqualTo(3L);
    assertThat(s.getPolicy()).isEqualTo("fast");
    assertThat(s.getAvailability()).isEqualTo("2/2");
    assertThat(s.getTotal()).isEqualTo(2);
    assertThat(s.getPanic()).isFalse();
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Panic").getStatus()).isEqualTo("False");
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("False");
    assertThat(condition(s, "Ready").getObservedGeneration()).isEqualTo(3L);
  }

  @Test
  void listsUnavailableBackendsFirstWithTheirState() {
    PoolView v =
        view(
            false,
            List.of(
                backend("a", dev.vigil.health.ActiveState.UP, false, false),
                backend("b", dev.vigil.health.ActiveState.DOWN, false, false),
                backend("c", dev.vigil.health.ActiveState.UP, true, false),
                backend("d", dev.vigil.health.ActiveState.UP, false, true)));

    BackendPoolStatus s = PoolStatusAggregator.build(1L, "fast", v, null, null, NOW);

    assertThat(s.getBackends())
        .extracting(BackendStatus::getPod)
        .containsExactly("b", "c", "d", "a");
    assertThat(s.getBackends())
        .extracting(BackendStatus::getState)
        .containsExactly(
            BackendState.DOWN, BackendState.EJECTED, BackendState.DRAINING, BackendState.UP);
    assertThat(s.getBackends().get(1).getEjectedUntil()).isNotNull();
    assertThat(s.getBackends().get(0).getLastProbe().getDetail()).isEqualTo("status 503");
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Degraded").getMessage()).contains("1 down", "1 ejected", "1 draining");
  }

  @Test
  void capsTheBackendListForVeryLargePools() {
    List<BackendSnapshot> many = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      many.add(
          backend(
              "p" + i,
              i < 300 ? dev.vigil.health.ActiveState.DOWN : dev.vigil.health.ActiveState.UP,
              false,
              false));
    }
    BackendPoolStatus s =
        PoolStatusAggregator.build(1L, "fast", view(false, many), null, null, NOW);

    assertThat(s.getBackends()).hasSize(PoolStatusAggregator.MAX_BACKENDS_LISTED);
    assertThat(s.getBackends()).allMatch(b -> b.getState() == BackendState.DOWN);
    assertThat(s.getTotal()).isEqualTo(1_000);
  }

  @Test
  void panicSaysWhyTrafficGoesToUnhealthyBackends() {
    PoolView v =
        view(
            true,
            List.of(
                backend("a", dev.vigil.health.ActiveState.UP, false, false),
                backend("b", dev.vigil.health.ActiveState.DOWN, false, false),
                backend("c", dev.vigil.health.ActiveState.DOWN, false, false),
                backend("d", dev.vigil.health.ActiveState.DOWN, false, false)));

    BackendPoolStatus s = PoolStatusAggregator.build(1L, "fast", v, null, null, NOW);

    assertThat(s.getPanic()).isTrue();
    assertThat(condition(s, "Panic").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Panic").getReason()).isEqualTo("PanicThresholdReached");
    assertThat(condition(s, "Panic").getMessage()).contains("1 of 4", "healthy or not");
  }

  @Test
  void aProblemMakesReadyFalseAndKeepsTheLastKnownBackends() {
    PoolView v = view(false, List.of(backend("a", dev.vigil.health.ActiveState.UP, false, false)));
    BackendPoolStatus before = PoolStatusAggregator.build(1L, "fast", v, null, null, NOW);

    BackendPoolStatus after =
        PoolStatusAggregator.build(
            1L,
            "fast",
            null,
            new Problem("PolicyNotFound", "HealthPolicy fast not found"),
            before,
            NOW + 1_000);

    assertThat(condition(after, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(after, "Ready").getReason()).isEqualTo("PolicyNotFound");
    assertThat(after.getBackends()).extracting(BackendStatus::getPod).containsExactly("a");
    assertThat(after.getAvailability()).isEqualTo("1/1");
  }

  @Test
  void keepsTransitionTimesOfUnchangedConditionsSoAnUnchangedPoolWritesNothing() {
    PoolView v = view(false, List.of(backend("a", dev.vigil.health.ActiveState.UP, false, false)));
    BackendPoolStatus first = PoolStatusAggregator.build(1L, "fast", v, null, null, NOW);
    BackendPoolStatus second = PoolStatusAggregator.build(1L, "fast", v, null, first, NOW + 60_000);

    assertThat(condition(second, "Ready").getLastTransitionTime())
        .isEqualTo(condition(first, "Ready").getLastTransitionTime());
    assertThat(StatusWriter.materiallyEqual(first, second)).isTrue();
  }

  @Test
  void probeTimesAloneAreNotAMaterialChange() {
    PoolView v = view(false, List.of(backend("a", dev.vigil.health.ActiveState.UP, false, false)));
    BackendPoolStatus first = PoolStatusAggregator.build(1L, "fast", v, null, null, NOW);
    BackendPoolStatus second = PoolStatusAggregator.build(1L, "fast", v, null, first, NOW);
    second.getBackends().get(0).getLastProbe().setAt("2030-01-01T00:00:00Z");
    second.getBackends().get(0).getLastProbe().setLatencyMs(99L);

    assertThat(StatusWriter.materiallyEqual(first, second)).isTrue();
    second.getBackends().get(0).setState(BackendState.DOWN);
    assertThat(StatusWriter.materiallyEqual(first, second)).isFalse();
  }

  @Test
  void checkerSuspectIsFalseWhileTheCheckerIsTrusted() {
    PoolView v = view(false, List.of(backend("a", dev.vigil.health.ActiveState.UP, false, false)));

    BackendPoolStatus s = PoolStatusAggregator.build(1L, "fast", v, null, null, NOW);

    assertThat(condition(s, "CheckerSuspect").getStatus()).isEqualTo("False");
    assertThat(condition(s, "CheckerSuspect").getReason()).isEqualTo("Healthy");
    assertThat(condition(s, "CheckerSuspect").getMessage())
        .contains("not Suspect", "not far above its peers'");
  }

  /**
   * The condition follows the checker's self-doubt, and each flip makes the status materially
   * different (so the publisher writes it) while nothing else changed.
   */
  @Test
  void checkerSuspectSaysWhetherDownsGoToVotersOrAreFrozenAndFlipsBack() {
    PoolView trusted =
        view(false, List.of(backend("a", dev.vigil.health.ActiveState.UP, false, false)));
    PoolView confirming =
        new PoolView(trusted.snapshot(), trusted.backends(), CheckerDoubt.CONFIRMING);
    PoolView frozen = new PoolView(trusted.snapshot(), trusted.backends(), CheckerDoubt.FROZEN);
    BackendPoolStatus before = PoolStatusAggregator.build(1L, "fast", trusted, null, null, NOW);

    BackendPoolStatus voting =
        PoolStatusAggregator.build(1L, "fast", confirming, null, before, NOW + 1_000);
    Condition c = condition(voting, "CheckerSuspect");
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo("Confirming");
    assertThat(c.getMessage())
        .contains("failing share is far above its peers'", "goes to the voters in other zones");
    assertThat(c.getLastTransitionTime())
        .isNotEqualTo(condition(before, "CheckerSuspect").getLastTransitionTime());
    assertThat(StatusWriter.materiallyEqual(before, voting)).isFalse();

    BackendPoolStatus held =
        PoolStatusAggregator.build(1L, "fast", frozen, null, voting, NOW + 2_000);
    c = condition(held, "CheckerSuspect");
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo("Frozen");
    assertThat(c.getMessage())
        .contains("failing share is far above its peers'", "no voter in another zone is live")
        .contains("publishes no new Down (Ups go through)");
    assertThat(c.getLastTransitionTime())
        .as("still True: the transition time is kept")
        .isEqualTo(condition(voting, "CheckerSuspect").getLastTransitionTime());
    assertThat(StatusWriter.materiallyEqual(voting, held)).isFalse();

    BackendPoolStatus after =
        PoolStatusAggregator.build(1L, "fast", trusted, null, held, NOW + 3_000);
    assertThat(condition(after, "CheckerSuspect").getStatus()).isEqualTo("False");
    assertThat(condition(after, "CheckerSuspect").getReason()).isEqualTo("Healthy");
    assertThat(StatusWriter.materiallyEqual(held, after)).isFalse();
  }

  @Test
  void backendsCarryTheVotesOnTheirLastDownAndNothingWhenNoneWentToTheVoters() {
    BackendSnapshot asked = backend("a", dev.vigil.health.ActiveState.UP, false, false);
    asked =
        new BackendSnapshot(
            asked.member(),
            asked.decision(),
            asked.published(),
            asked.healthy(),
            asked.since(),
            asked.lastProbe(),
            null,
            new Confirmer.Votes(List.of("zone-b"), List.of("zone-c"), List.of("zone-d")),
            List.of());
    BackendSnapshot never = backend("b", dev.vigil.health.ActiveState.UP, false, false);

    BackendPoolStatus s =
        PoolStatusAggregator.build(1L, "fast", view(false, List.of(asked, never)), null, null, NOW);

    BackendStatus a = s.getBackends().get(0);
    assertThat(a.getConfirmedBy()).containsExactly("zone-b");
    assertThat(a.getRefutedBy()).containsExactly("zone-c");
    assertThat(a.getAbstained()).containsExactly("zone-d");
    BackendStatus b = s.getBackends().get(1);
    assertThat(b.getConfirmedBy()).isNull();
    assertThat(b.getRefutedBy()).isNull();
    assertThat(b.getAbstained()).isNull();
    String json = io.fabric8.kubernetes.client.utils.Serialization.asJson(b);
    assertThat(json).doesNotContain("confirmedBy", "refutedBy", "abstained");
  }
}
