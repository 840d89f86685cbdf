package dev.vigil.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.LastProbe;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code vigil why} and {@code vigil top} from objects, at a fixed time. */
class InspectReportsTest {
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  @Test
  void whyNamesTheStateTheProbeTheSliceAndWhatBringsADownPodBack() {
    Pod pod = Fixtures.pod("shop", "web-2", "web", "198.18.0.12");
    BackendPool pool = pool("web", 4, 3, false, backend("web-2", BackendState.DOWN));
    String text = WhyReport.render(pod, List.of(facts(pool, policy(), slice(false))), NOW);
    assertThat(text)
        .contains("Pod shop/web-2  IP 198.18.0.12")
        .contains("BackendPool web  (policy fast, HTTP every 500ms, rise 2, fall 3)")
        .contains("pool:       3/4 available, panic: no (threshold 50%)")
        .contains("state:      Down since 2026-12-01T11:59:48Z (12s ago)")
        .contains("reason:     3 probes failed: connection refused")
        .contains("last probe: failed 2026-12-01T11:59:59Z (1s ago), 1 ms: connection refused")
        .contains("slice:      ready=false serving=false terminating=false")
        .contains("traffic:    NO")
        .contains("2 passing probes in a row bring it Up (one every 500ms)");
  }

  @Test
  void whySaysADownPodInAPanickingPoolGetsTrafficAndWhenPanicEnds() {
    Pod pod = Fixtures.pod("shop", "web-2", "web", "198.18.0.12");
    BackendPool pool = pool("web", 4, 1, true, backend("web-2", BackendState.DOWN));
    String text = WhyReport.render(pod, List.of(facts(pool, policy(), slice(true))), NOW);
    assertThat(text)
        .contains("panic: YES (every decided backend is published)")
        .contains("traffic:    YES")
        .contains("the pool is in panic, so it is published anyway; panic ends when 50%");
  }

  @Test
  void whyGivesTheEndOfAnEjectionAndOfDamping() {
    Pod pod = Fixtures.pod("shop", "web-3", "web", "198.18.0.12");
    BackendStatus ejected = backend("web-3", BackendState.EJECTED);
    ejected.setEjectedUntil("2026-12-01T12:00:30Z");
    ejected.setEjections(2);
    String text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 4, 3, false, ejected), policy(), slice(false))), NOW);
    assertThat(text)
        .contains("ejection:   ejected until 2026-12-01T12:00:30Z (in 30s) (2 ejections counted)")
        .contains("its ejection ends 2026-12-01T12:00:30Z (in 30s);");

    BackendStatus damped = backend("web-3", BackendState.DAMPED);
    damped.setDampedUntil("2026-12-01T12:02:00Z");
    damped.setMerit(3500.0);
    text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 4, 3, false, damped), policy(), slice(false))), NOW);
    assertThat(text)
        .contains("damping:    damped until 2026-12-01T12:02:00Z (in 2m)")
        .contains("flap damping holds it back until 2026-12-01T12:02:00Z (in 2m)");
  }

  @Test
  void whyNamesWhoHoldsABackendOutAndHowToLiftIt() {
    Pod pod = Fixtures.pod("shop", "web-3", "web", "198.18.0.12");
    BackendStatus drained = backend("web-3", BackendState.DRAINING);
    drained.setReason("drain by admin");
    String text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 4, 3, true, drained), policy(), slice(false))), NOW);
    assertThat(text)
        .contains("state:      Draining")
        .contains("reason:     drain by admin")
        .contains("kubectl vigil ready web-3")
        .doesNotContain("published anyway");

    BackendStatus maint = backend("web-3", BackendState.MAINT);
    maint.setReason("maint by agent: migrating");
    text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 4, 3, false, maint), policy(), slice(false))), NOW);
    assertThat(text)
        .contains("state:      Maint")
        .contains("reason:     maint by agent: migrating")
        .contains("returns when the agent answers 'ready'");

    BackendStatus down = backend("web-3", BackendState.DOWN);
    down.setReason("down by agent: disk full");
    text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 4, 3, false, down), policy(), slice(false))), NOW);
    assertThat(text).contains("its own agent reports it down");
  }

  @Test
  void whySaysWhenNoPoolSelectsThePodAndWhenThePoolDoesNotListIt() {
    Pod pod = Fixtures.pod("shop", "web-9", "web", "198.18.0.19");
    assertThat(WhyReport.render(pod, List.of(), NOW))
        .contains("No BackendPool in namespace shop selects this Pod");
    BackendPool pool = pool("web", 1, 1, false, backend("web-1", BackendState.UP));
    assertThat(WhyReport.render(pod, List.of(facts(pool, policy(), List.of())), NOW))
        .contains("backend:    none: the pool selects the Pod but lists no backend for it")
        .contains("slice:      not in the pool's slices")
        .contains("traffic:    NO");
  }

  /** A pool whose policy is missing: the one thing to do is create it, not wait for a Pod IP. */
  @Test
  void whySaysToCreateAMissingPolicy() {
    Pod pod = Fixtures.pod("shop", "web-9", "web", "198.18.0.19");
    BackendPool pool = pool("web", 0, 0, false);
    String text = WhyReport.render(pod, List.of(facts(pool, null, List.of())), NOW);
    assertThat(text)
        .contains("(policy fast: not found)")
        .contains(
            "policy:     HealthPolicy fast not found in namespace shop: Vigil does not probe"
                + " this pool")
        .contains("to change:  create HealthPolicy fast in namespace shop")
        .contains("traffic:    NO")
        .doesNotContain("no Pod IP yet")
        .doesNotContain("backend:");
  }

  /**
   * Status is written on change: an Up backend's last probe can be many intervals old while probing
   * goes on, and why says so rather than letting it read as if probing stopped.
   */
  @Test
  void whyExplainsALastProbeOlderThanTwoIntervals() {
    Pod pod = Fixtures.pod("shop", "web-1", "web", "198.18.0.12");
    BackendStatus up = backend("web-1", BackendState.UP);
    up.getLastProbe().setAt("2026-12-01T11:59:43Z"); // 17 s ago at a 500ms interval
    String text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 1, 1, false, up), policy(), slice(true))), NOW);
    assertThat(text)
        .contains("last probe: passed 2026-12-01T11:59:43Z (17s ago)")
        .contains("status is written on change")
        .contains("probing goes on, one every 500ms");

    up.getLastProbe().setAt("2026-12-01T11:59:59.500Z"); // within two intervals: no note
    text =
        WhyReport.render(
            pod, List.of(facts(pool("web", 1, 1, false, up), policy(), slice(true))), NOW);
    assertThat(text).doesNotContain("written on change");
  }

  /** Who voted how on the backend's last Down put to the vote, and the outcome by the rule. */
  @Test
  void whySaysWhoConfirmedOrRefutedTheLastDown() {
    Pod pod = Fixtures.pod("shop", "web-2", "web", "198.18.0.12");
    BackendStatus down = backend("web-2", BackendState.DOWN);
    down.setConfirmedBy(List.of("zone-b", "zone-c"));
    down.setRefutedBy(List.of());
    down.setAbstained(List.of());
    assertThat(why(pod, down)).contains("votes:      last Down confirmed by zone-b, zone-c\n");

    BackendStatus up = backend("web-2", BackendState.UP);
    up.setConfirmedBy(List.of());
    up.setRefutedBy(List.of("zone-b"));
    up.setAbstained(List.of("zone-c"));
    assertThat(why(pod, up))
        .contains("votes:      last Down not confirmed: zone-b said Up, zone-c abstained\n");

    // at downPercent 50, one Down against two Ups: 2 x 100 > 50 x 4 fails, so not confirmed
    up.setConfirmedBy(List.of("zone-b"));
    up.setRefutedBy(List.of("zone-c", "zone-d"));
    up.setAbstained(List.of());
    assertThat(why(pod, up))
        .contains("votes:      last Down not confirmed: zone-b said Down, zone-c, zone-d said Up");

    up.setConfirmedBy(List.of());
    up.setRefutedBy(List.of());
    up.setAbstained(List.of("zone-b"));
    assertThat(why(pod, up))
        .contains(
            "votes:      last Down went to the voters and none answered (zone-b abstained): this"
                + " checker decided alone");

    assertThat(why(pod, backend("web-2", BackendState.UP))).doesNotContain("votes:");
  }

  @Test
  void whyShowsASuspectCheckerAndNothingWhileItIsTrusted() {
    Pod pod = Fixtures.pod("shop", "web-2", "web", "198.18.0.12");
    BackendPool pool = pool("web", 4, 4, false, backend("web-2", BackendState.UP));
    pool.getStatus()
        .setConditions(
            List.of(
                new ConditionBuilder()
                    .withType("CheckerSuspect")
                    .withStatus("True")
                    .withReason("Frozen")
                    .withMessage("this checker is Suspect: no new Down")
                    .build()));
    assertThat(WhyReport.render(pod, List.of(facts(pool, policy(), slice(true))), NOW))
        .contains("checker:    Suspect, Frozen: this checker is Suspect: no new Down\n");

    pool.getStatus().getConditions().get(0).setStatus("False");
    pool.getStatus().getConditions().get(0).setReason("Healthy");
    assertThat(WhyReport.render(pod, List.of(facts(pool, policy(), slice(true))), NOW))
        .doesNotContain("checker:");
  }

  private static String why(Pod pod, BackendStatus b) {
    BackendPool pool = pool("web", 4, 3, false, b);
    return WhyReport.render(pod, List.of(facts(pool, policy(), slice(false))), NOW);
  }

  @Test
  void topSortsByUnavailableShareAndCountsStatesAndRefusals() {
    BackendPool healthy = pool("api", 2, 2, false, backend("api-1", BackendState.UP));
    BackendPool bad =
        pool(
            "web",
            4,
            1,
            false,
            backend("web-1", BackendState.UP),
            backend("web-2", BackendState.DOWN),
            backend("web-3", BackendState.EJECTED),
            backend("web-4", BackendState.DRAINING),
            backend("web-5", BackendState.MAINT));
    var refusedEvent =
        new EventBuilder()
            .withReason("EjectionRefused")
            .withCount(3)
            .withNewInvolvedObject()
            .withKind("BackendPool")
            .withNamespace("shop")
            .withName("web")
            .endInvolvedObject()
            .build();
    String text =
        TopReport.render(List.of(healthy, bad), InspectCommand.refusals(List.of(refusedEvent)));
    List<String> lines = text.lines().toList();
    assertThat(lines.get(0).split("\\s+")).containsExactlyElementsOf(TopReport.HEADER);
    assertThat(lines.get(1).split("\\s+"))
        .containsExactly("shop", "web", "1/4", "75%", "1", "1", "0", "2", "0", "false", "3");
    assertThat(lines.get(2).split("\\s+"))
        .containsExactly("shop", "api", "2/2", "0%", "0", "0", "0", "0", "0", "false", "0");
  }

  @Test
  void theFlagsAreKubectls() {
    var a = InspectCommand.Args.parse(List.of("web-1", "-n", "shop"), false);
    assertThat(a.positional()).containsExactly("web-1");
    assertThat(a.namespace()).isEqualTo("shop");
    assertThat(InspectCommand.Args.parse(List.of("--namespace=shop"), true).namespace())
        .isEqualTo("shop");
    assertThat(InspectCommand.Args.parse(List.of("-nshop"), true).namespace()).isEqualTo("shop");
    assertThat(InspectCommand.Args.parse(List.of("-A"), true).all()).isTrue();
    assertThat(InspectCommand.Args.parse(List.of("-A"), false).error())
        .isEqualTo("unknown flag -A");
    assertThat(InspectCommand.Args.parse(List.of("-n"), false).error())
        .isEqualTo("-n needs a namespace");
  }

  private static HealthPolicy policy() {
    return Fixtures.policy("shop", "fast", "500ms", "300ms");
  }

  private static WhyReport.PoolFacts facts(
      BackendPool pool, HealthPolicy policy, List<EndpointSlice> slices) {
    return new WhyReport.PoolFacts(pool, policy, slices);
  }

  private static BackendPool pool(
      String name, int total, int available, boolean panic, BackendStatus... backends) {
    BackendPool pool = Fixtures.pool("shop", name, "fast", name, 8080);
    BackendPoolStatus s = new BackendPoolStatus();
    s.setTotal(total);
    s.setAvailable(available);
    s.setAvailability(available + "/" + total);
    s.setPanic(panic);
    s.setBackends(new ArrayList<>(List.of(backends)));
    pool.setStatus(s);
    return pool;
  }

  private static BackendStatus backend(String pod, BackendState state) {
    BackendStatus b = new BackendStatus();
    b.setPod(pod);
    b.setState(state);
    b.setSince("2026-12-01T11:59:48Z");
    if (state == BackendState.DOWN) {
      b.setReason("3 probes failed: connection refused");
    }
    LastProbe p = new LastProbe();
    p.setAt("2026-12-01T11:59:59Z");
    p.setOk(state != BackendState.DOWN);
    p.setLatencyMs(1L);
    p.setDetail(state == BackendState.DOWN ? "connection refused" : "status 200");
    b.setLastProbe(p);
    return b;
  }

  private static List<EndpointSlice> slice(boolean ready) {
    return List.of(
        new EndpointSliceBuilder()
            .withNewMetadata()
            .withName("web-vigil-0")
            .endMetadata()
            .addNewEndpoint()
            .withAddresses("198.18.0.12")
            .withNewConditions()
            .withReady(ready)
            .withServing(ready)
            .withTerminating(false)
            .endConditions()
            .endEndpoint()
            .build());
  }
}
