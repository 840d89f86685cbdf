package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.api.v1alpha1.Damping;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.LatencyRule;
import dev.vigil.api.v1alpha1.Quorum;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.health.QuorumSettings;
import dev.vigil.testing.Fixtures;
import org.junit.jupiter.api.Test;

class PolicyResolverTest {
  private static HealthPolicy policy() {
    return Fixtures.policy("shop", "fast", "300ms", "250ms");
  }

  @Test
  void resolvesDurationsThresholdsAndTheCheck() {
    ResolvedPolicy r = PolicyResolver.resolve(policy());

    assertThat(r.settings().intervalMs()).isEqualTo(300);
    assertThat(r.settings().timeoutMs()).isEqualTo(250);
    assertThat(r.settings().fall()).isEqualTo(3);
    assertThat(r.settings().baseEjectionTimeMs()).isEqualTo(2_000);
    assertThat(r.check().timeout().toMillis()).isEqualTo(250);
    assertThat(r.check().http().path()).isEqualTo("/healthz");
  }

  /** Issue 31: a tenant's policy cannot go under the admin's floors. */
  @Test
  void theAdminsFloorsRaiseIntervalsAndDefaultTheDamping() {
    TenantFloors floors = new TenantFloors(1_000, true);
    HealthPolicy p = policy(); // interval 300ms, timeout 250ms, no damping
    p.getSpec().getActive().setFastInterval("500ms");
    p.getSpec().getActive().setDownInterval("2s");

    ResolvedPolicy r = PolicyResolver.resolve(p, floors);

    assertThat(r.settings().intervalMs()).isEqualTo(1_000);
    assertThat(r.settings().intervalMs(dev.vigil.health.ProbePhase.FAST)).isEqualTo(1_000);
    assertThat(r.settings().intervalMs(dev.vigil.health.ProbePhase.DOWN)).isEqualTo(2_000);
    assertThat(r.settings().timeoutMs()).isEqualTo(250);
    assertThat(r.settings().damping()).isEqualTo(DampingSettings.defaults());

    HealthPolicy own = policy();
    Damping mild = new Damping();
    mild.setPenalty(10);
    own.getSpec().setDamping(mild);
    assertThat(PolicyResolver.resolve(own, floors).settings().damping().penalty())
        .as("a policy's own damping block wins")
        .isEqualTo(10);
    assertThat(PolicyResolver.resolve(policy(), TenantFloors.NONE).settings().damping()).isNull();
    assertThat(PolicyResolver.resolve(policy(), TenantFloors.NONE).settings().intervalMs())
        .isEqualTo(300);
  }

  @Test
  void namesTheFieldOfABadValue() {
    HealthPolicy p = policy();
    p.getSpec().getActive().setRise(0);
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .isInstanceOf(InvalidSettingsException.class)
        .hasMessageStartingWith("active.rise");

    HealthPolicy q = policy();
    q.getSpec().getActive().setTimeout("1s");
    assertThatThrownBy(() -> PolicyResolver.resolve(q)).hasMessageContaining("active.timeout");

    HealthPolicy d = policy();
    d.getSpec().getPassive().setBaseEjectionTime("soon");
    assertThatThrownBy(() -> PolicyResolver.resolve(d))
        .hasMessageStartingWith("passive.baseEjectionTime");

    HealthPolicy regex = policy();
    regex.getSpec().getActive().getHttp().setBodyMatch("(unclosed");
    assertThatThrownBy(() -> PolicyResolver.resolve(regex))
        .hasMessageStartingWith("active.http.bodyMatch");
  }

  /** Issue 32: {@code quorum} is off when absent; its timeout follows the floored interval. */
  @Test
  void resolvesTheQuorumWithItsDefaultsAndComputedTimeout() {
    assertThat(PolicyResolver.resolve(policy()).settings().quorum()).isNull();

    HealthPolicy empty = policy(); // interval 300ms, timeout 250ms, fall 3
    empty.getSpec().setQuorum(new Quorum());
    assertThat(PolicyResolver.resolve(empty).settings().quorum())
        .isEqualTo(new QuorumSettings(2, 50, 300 * 3 + 250));
    assertThat(PolicyResolver.resolve(empty, new TenantFloors(1_000, false)).settings().quorum())
        .as("the default timeout uses the interval the tenant's floor raised")
        .isEqualTo(new QuorumSettings(2, 50, 1_000 * 3 + 250));

    Quorum unset = new Quorum(); // as read from a mock API server without schema defaults
    unset.setConfirmers(null);
    unset.setDownPercent(null);
    HealthPolicy bare = policy();
    bare.getSpec().setQuorum(unset);
    assertThat(PolicyResolver.resolve(bare).settings().quorum())
        .isEqualTo(new QuorumSettings(2, 50, 1_150));

    Quorum own = new Quorum();
    own.setConfirmers(3);
    own.setDownPercent(66);
    own.setTimeout("1m30s");
    HealthPolicy explicit = policy();
    explicit.getSpec().setQuorum(own);
    assertThat(PolicyResolver.resolve(explicit).settings().quorum())
        .isEqualTo(new QuorumSettings(3, 66, 90_000));
  }

  @Test
  void aBadQuorumNamesItsFieldInTheAcceptedCondition() {
    Quorum all = new Quorum();
    all.setDownPercent(100);
    assertThat(invalidCondition(withQuorum(all)))
        .startsWith("quorum.downPercent: must be between 0 and 99")
        .contains("was 100");
    Quorum few = new Quorum();
    few.setConfirmers(0);
    assertThat(invalidCondition(withQuorum(few)))
        .startsWith("quorum.confirmers: must be between 1 and 5");
    Quorum never = new Quorum();
    never.setTimeout("0s");
    assertThat(invalidCondition(withQuorum(never)))
        .startsWith("quorum.timeout: must be at least 1ms");
    Quorum garbled = new Quorum();
    garbled.setTimeout("-5s");
    assertThat(invalidCondition(withQuorum(garbled)))
        .startsWith("quorum.timeout: must be a duration");
  }

  @Test
  void theAgentCheckDefaultsToTheIntervalAndABadOneNamesItsField() {
    HealthPolicy p = policy();
    p.getSpec().getActive().setAgent(new dev.vigil.api.v1alpha1.AgentCheck(9999, null));
    assertThat(PolicyResolver.resolve(p).check().agent())
        .isEqualTo(new dev.vigil.probe.CheckSpec.Agent(9999, java.time.Duration.ofMillis(300)));
    assertThat(PolicyResolver.resolve(policy()).check().agent().enabled()).isFalse();

    p.getSpec().getActive().setAgent(new dev.vigil.api.v1alpha1.AgentCheck(9999, "200ms"));
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .isInstanceOf(InvalidSettingsException.class)
        .hasMessageStartingWith("active.agent.interval")
        .hasMessageContaining("longer than active.timeout");

    p.getSpec().getActive().setAgent(new dev.vigil.api.v1alpha1.AgentCheck(70000, "1s"));
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .isInstanceOf(InvalidSettingsException.class)
        .hasMessageStartingWith("active.agent.port");

    p.getSpec().getActive().setAgent(new dev.vigil.api.v1alpha1.AgentCheck());
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .isInstanceOf(InvalidSettingsException.class)
        .hasMessageStartingWith("active.agent.port");
  }

  private static HealthPolicy withQuorum(Quorum quorum) {
    HealthPolicy p = policy();
    p.getSpec().setQuorum(quorum);
    return p;
  }

  /**
   * The message of an invalid policy's Accepted condition, as the reconciler builds it: the
   * resolver's error through the status aggregator, checked to be Accepted False InvalidPolicy.
   */
  private static String invalidCondition(HealthPolicy p) {
    String invalid = null;
    try {
      PolicyResolver.resolve(p);
    } catch (InvalidSettingsException e) {
      invalid = e.getMessage();
    }
    var status =
        dev.vigil.publish.PolicyStatusAggregator.fromPoolStatuses(
            1L, invalid, java.util.List.of(), null, 1_000);
    var accepted = status.getConditions().get(0);
    assertThat(accepted.getType()).isEqualTo(dev.vigil.api.Conditions.ACCEPTED);
    assertThat(accepted.getStatus()).isEqualTo("False");
    assertThat(accepted.getReason()).isEqualTo(dev.vigil.api.Conditions.INVALID_POLICY);
    return accepted.getMessage();
  }

  @Test
  void refusesPatternsOutsideRe2AndReportsAcceptedFalseNamingTheField() {
    HealthPolicy backreference = policy();
    backreference.getSpec().getActive().getHttp().setBodyMatch("^(ok)\\1$");
    assertThatThrownBy(() -> PolicyResolver.resolve(backreference))
        .isInstanceOf(InvalidSettingsException.class)
        .hasMessageStartingWith("active.http.bodyMatch: not a valid RE2 expression");

    HealthPolicy lookahead = policy();
    lookahead
        .getSpec()
        .getActive()
        .getHttp()
        .setHeaderMatch(
            java.util.List.of(
                new dev.vigil.api.v1alpha1.HttpHeaderMatch("X-Build", null),
                new dev.vigil.api.v1alpha1.HttpHeaderMatch("X-Ready", "(?=yes)")));
    assertThat(invalidCondition(lookahead))
        .startsWith("active.http.headerMatch[1].value: not a valid RE2 expression");
  }

  @Test
  void mapsTheSeedCheckersFields() {
    HealthPolicy p = policy();
    var http = p.getSpec().getActive().getHttp();
    http.setMethod("POST");
    http.setBody("{\"ping\":1}");
    http.setHeaderMatch(
        java.util.List.of(
            new dev.vigil.api.v1alpha1.HttpHeaderMatch("X-Ready", "^yes$"),
            new dev.vigil.api.v1alpha1.HttpHeaderMatch("X-Build", null)));
    http.setFailFastStatuses(java.util.List.of("500-599", "429"));
    p.getSpec().getPassive().setWindowFailures(4);
    p.getSpec().getPassive().setFailureWindow("30s");

    ResolvedPolicy r = PolicyResolver.resolve(p);

    assertThat(r.check().http().body()).isEqualTo("{\"ping\":1}");
    assertThat(r.check().http().headerMatch())
        .extracting(m -> m.name() + "=" + (m.value() == null ? "" : m.value().pattern()))
        .containsExactly("X-Ready=^yes$", "X-Build=");
    assertThat(r.check().http().failFastStatuses().contains(503)).isTrue();
    assertThat(r.check().http().failFastStatuses().contains(404)).isFalse();
    assertThat(r.settings().windowFailures()).isEqualTo(4);
    assertThat(r.settings().failureWindowMs()).isEqualTo(30_000);
    assertThat(PolicyResolver.resolve(policy()).check().http().failFastStatuses().isEmpty())
        .isTrue();
    assertThat(PolicyResolver.resolve(policy()).settings().windowFailures()).isZero();
  }

  @Test
  void mapsHttpVersionTwoForHttpAndHttpsOnly() {
    HealthPolicy p = policy();
    assertThat(PolicyResolver.resolve(p).check().http2()).isFalse();
    p.getSpec().getActive().getHttp().setVersion("2");
    assertThat(PolicyResolver.resolve(p).check().http2()).isTrue();
    p.getSpec().getActive().setProtocol(dev.vigil.api.v1alpha1.Protocol.TCP);
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .hasMessageStartingWith("active.http.version")
        .hasMessageContaining("HTTP or HTTPS");
    p.getSpec().getActive().setProtocol(dev.vigil.api.v1alpha1.Protocol.HTTP);
    p.getSpec().getActive().getHttp().setVersion("3");
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .hasMessageStartingWith("active.http.version");
  }

  @Test
  void mapsAWebSocketCheck() {
    HealthPolicy p = policy();
    p.getSpec().getActive().setProtocol(dev.vigil.api.v1alpha1.Protocol.WEBSOCKET);
    dev.vigil.api.v1alpha1.WebSocketCheck ws = new dev.vigil.api.v1alpha1.WebSocketCheck();
    ws.setPath("/ws");
    p.getSpec().getActive().setWebsocket(ws);
    ResolvedPolicy r = PolicyResolver.resolve(p);
    assertThat(r.check().protocol()).isEqualTo(dev.vigil.probe.ProbeProtocol.WEBSOCKET);
    assertThat(r.check().websocket().path()).isEqualTo("/ws");
    assertThat(r.check().usesTls()).isFalse();
    ws.setPath("ws");
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .hasMessageStartingWith("active.websocket.path");
  }

  @Test
  void namesTheBadSeedCheckerField() {
    HealthPolicy overlap = policy();
    overlap.getSpec().getActive().getHttp().setFailFastStatuses(java.util.List.of("300-503"));
    assertThatThrownBy(() -> PolicyResolver.resolve(overlap))
        .hasMessageStartingWith("active.http.failFastStatuses")
        .hasMessageContaining("300 is also in expectedStatuses");

    HealthPolicy regex = policy();
    regex
        .getSpec()
        .getActive()
        .getHttp()
        .setHeaderMatch(
            java.util.List.of(new dev.vigil.api.v1alpha1.HttpHeaderMatch("X-Ready", "(yes")));
    assertThatThrownBy(() -> PolicyResolver.resolve(regex))
        .hasMessageStartingWith("active.http.headerMatch[0].value");

    HealthPolicy get = policy();
    get.getSpec().getActive().getHttp().setBody("{}");
    assertThatThrownBy(() -> PolicyResolver.resolve(get))
        .hasMessageStartingWith("active.http.body")
        .hasMessageContaining("not GET");

    HealthPolicy window = policy();
    window.getSpec().getPassive().setFailureWindow("0s");
    assertThatThrownBy(() -> PolicyResolver.resolve(window))
        .hasMessageStartingWith("passive.failureWindow");
  }

  @Test
  void mapsTheStatisticalRules() {
    HealthPolicy p = policy();
    LatencyRule latency = new LatencyRule();
    latency.setFloor("150ms");
    latency.setEnforce(false);
    p.getSpec().getPassive().setLatency(latency);

    ResolvedPolicy r = PolicyResolver.resolve(p);

    assertThat(r.settings().latency()).isNotNull();
    assertThat(r.settings().latency().floorMs()).isEqualTo(150);
    assertThat(r.settings().enforces(r.settings().latency().enforce())).isFalse();
    assertThat(r.settings().successRate()).isNull();
  }

  @Test
  void phaseIntervalsDefaultToTheIntervalAndDampingIsOffWithoutItsBlock() {
    ResolvedPolicy r = PolicyResolver.resolve(policy());
    assertThat(r.settings().fastIntervalMs()).isEqualTo(300);
    assertThat(r.settings().downIntervalMs()).isEqualTo(300);
    assertThat(r.settings().damping()).isNull();

    HealthPolicy p = policy();
    p.getSpec().getActive().setFastInterval("260ms");
    p.getSpec().getActive().setDownInterval("1m");
    Damping damping = new Damping();
    damping.setHalfLife("10s");
    p.getSpec().setDamping(damping);
    ResolvedPolicy q = PolicyResolver.resolve(p);
    assertThat(q.settings().fastIntervalMs()).isEqualTo(260);
    assertThat(q.settings().downIntervalMs()).isEqualTo(60_000);
    assertThat(q.settings().damping())
        .isEqualTo(new DampingSettings(1000, 3000, 750, 10_000, 300_000));
  }

  @Test
  void namesTheBadPhaseIntervalOrDampingField() {
    HealthPolicy p = policy();
    p.getSpec().getActive().setFastInterval("250ms");
    assertThatThrownBy(() -> PolicyResolver.resolve(p))
        .hasMessageStartingWith("active.fastInterval");

    HealthPolicy q = policy();
    Damping d = new Damping();
    d.setReuseThreshold(5000);
    q.getSpec().setDamping(d);
    assertThatThrownBy(() -> PolicyResolver.resolve(q))
        .hasMessageStartingWith("damping.reuseThreshold");
  }

  @Test
  void goDurationsParseAsTheApiServerWrites() {
    assertThat(Durations.millis("f", "1m30s")).isEqualTo(90_000);
    assertThat(Durations.millis("f", "1.5s")).isEqualTo(1_500);
    assertThat(Durations.millis("f", "100ms")).isEqualTo(100);
    assertThatThrownBy(() -> Durations.millis("passive.sweepInterval", "10"))
        .hasMessageStartingWith("passive.sweepInterval");
  }

  /**
   * It runs on every reconcile: an unchanged policy resolves to equal values, re-applying nothing.
   */
  @Test
  void anUnchangedPolicyResolvesToEqualValuesEveryTime() {
    ResolvedPolicy first = PolicyResolver.resolve(policy());
    ResolvedPolicy again = PolicyResolver.resolve(policy());
    assertThat(again.settings()).isEqualTo(first.settings());
    assertThat(again.check()).isEqualTo(first.check());
    assertThat(again.version()).isEqualTo(first.version());
  }
}
