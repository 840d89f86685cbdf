package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.AgentState.Admin;
import dev.vigil.health.AgentState.Op;
import org.junit.jupiter.api.Test;

/**
 * Admin and agent holds in the decision core (docs/decision.md, "Admin state and the agent"): drain
 * and maint never make a backend ready, not even in panic, and count toward neither panic nor the
 * ejection cap; an agent's down is an unavailable, decided backend.
 */
class HeldBackendsTest {
  private static final long T0 = 1_000_000;
  private static final BackendHold ADMIN_DRAIN = BackendHold.of(AdminState.DRAIN, AgentState.NONE);
  private static final BackendHold ADMIN_MAINT = BackendHold.of(AdminState.MAINT, AgentState.NONE);
  private static final BackendHold AGENT_DOWN =
      BackendHold.of(AdminState.UP, AgentState.NONE.after(null, Op.DOWN, "disk full"));

  private PoolHealth pool(HealthSettings s, int up) {
    PoolHealth p = new PoolHealth(s);
    for (int i = 0; i < up; i++) {
      p.onProbeResult(p.add("b" + i), true, T0);
    }
    return p;
  }

  @Test
  void drainedBackendIsServingButNotReadyAndBackAfterTheHoldLifts() {
    PoolHealth p = pool(HealthSettings.defaults(), 3);
    long v = p.snapshot().version();
    p.setHold(p.backend("b0"), ADMIN_DRAIN);
    AvailabilitySnapshot s = p.snapshot();
    assertThat(s.ready()).containsExactlyInAnyOrder("b1", "b2");
    assertThat(s.drainingServing()).containsExactly("b0");
    assertThat(s.version()).isGreaterThan(v);
    p.setHold(p.backend("b0"), BackendHold.NONE);
    assertThat(p.snapshot().ready()).containsExactlyInAnyOrder("b0", "b1", "b2");
    assertThat(p.snapshot().drainingServing()).isEmpty();
  }

  @Test
  void drainAndMaintDoNotCountTowardPanic() {
    // 4 backends, 2 held: without the hold 2/4 available is not below 50 %, with 1 Down of the
    // other 2 it would be 1/4 -> panic; held out it is 1/2, still not below 50 %.
    PoolHealth p = pool(HealthSettings.defaults(), 4);
    p.setHold(p.backend("b0"), ADMIN_DRAIN);
    p.setHold(p.backend("b1"), ADMIN_MAINT);
    for (int i = 0; i < 3; i++) {
      p.onProbeResult(p.backend("b2"), false, T0);
    }
    AvailabilitySnapshot s = p.snapshot();
    assertThat(s.panic()).isFalse();
    assertThat(s.counts().decided()).isEqualTo(2);
    assertThat(s.ready()).containsExactly("b3");
  }

  @Test
  void heldBackendsAreNeverReadyNotEvenInPanic() {
    PoolHealth p = pool(HealthSettings.defaults(), 3);
    p.setHold(p.backend("b0"), ADMIN_MAINT);
    for (String id : new String[] {"b1", "b2"}) {
      for (int i = 0; i < 3; i++) {
        p.onProbeResult(p.backend(id), false, T0);
      }
    }
    AvailabilitySnapshot s = p.snapshot();
    assertThat(s.panic()).isTrue();
    assertThat(s.ready()).containsExactlyInAnyOrder("b1", "b2");
  }

  @Test
  void heldBackendsLeaveTheEjectionCapDenominator() {
    // 10 backends, cap 10 %: one ejection allowed. With 2 held out, 8 remain: 1 x 100 > 10 x 8,
    // so the first ejection is refused, as it would be for a pool of 8.
    PoolHealth p =
        pool(HealthSettings.builder().maxEjectionPercent(10).consecutiveErrors(1).build(), 10);
    p.setHold(p.backend("b8"), ADMIN_DRAIN);
    p.setHold(
        p.backend("b9"),
        BackendHold.of(AdminState.UP, AgentState.NONE.after(Admin.MAINT, null, "")));
    EjectionDecision d = p.onRequestOutcome(p.backend("b0"), false, Origin.UPSTREAM, T0);
    assertThat(d.kind()).isEqualTo(EjectionDecision.Kind.REFUSED_BY_CAP);
    p.setHold(p.backend("b9"), BackendHold.NONE);
    p.setHold(p.backend("b8"), BackendHold.NONE);
    assertThat(p.onRequestOutcome(p.backend("b0"), false, Origin.UPSTREAM, T0).kind())
        .isEqualTo(EjectionDecision.Kind.EJECTED);
  }

  @Test
  void agentDownIsUnavailableButDecidedAndTheChecksRunsAreKept() {
    PoolHealth p = pool(HealthSettings.defaults(), 2);
    p.setHold(p.backend("b0"), AGENT_DOWN);
    AvailabilitySnapshot s = p.snapshot();
    assertThat(s.available()).containsExactly("b1");
    assertThat(s.counts().decided()).isEqualTo(2);
    assertThat(p.backend("b0").state()).isEqualTo(ActiveState.UP);
    p.setHold(p.backend("b0"), BackendHold.NONE);
    assertThat(p.snapshot().available()).containsExactlyInAnyOrder("b0", "b1");
  }

  @Test
  void drainToMaintChangesTheVersionSoSlicesAreRewritten() {
    PoolHealth p = pool(HealthSettings.defaults(), 2);
    p.setHold(p.backend("b0"), ADMIN_DRAIN);
    long v = p.snapshot().version();
    p.setHold(p.backend("b0"), ADMIN_MAINT);
    assertThat(p.snapshot().version()).isGreaterThan(v);
  }
}
