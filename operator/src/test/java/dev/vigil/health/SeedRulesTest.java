package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.EjectionDecision.Kind;
import org.junit.jupiter.api.Test;

/** docs/design.md §2.2 exactly: fail-fast statuses, and failures within a window. */
class SeedRulesTest {
  private static final long T0 = 1_000_000;

  private static PoolHealth pool(HealthSettingsBuilder settings, int backends) {
    PoolHealth pool = new PoolHealth(settings.build());
    for (int i = 0; i < backends; i++) {
      pool.onProbeResult(pool.add("b" + i), true, T0);
    }
    return pool;
  }

  private static HealthSettingsBuilder window(int failures, long windowMs) {
    return HealthSettings.builder()
        .consecutiveErrors(0)
        .maxEjectionPercent(100)
        .windowFailures(failures)
        .failureWindowMs(windowMs);
  }

  private static EjectionDecision fail(PoolHealth pool, Backend b, long now) {
    return pool.onRequestOutcome(b, false, Origin.UPSTREAM, now);
  }

  @Test
  void aFailFastFailureTakesAnUpBackendDownAtOnceWhateverFall() {
    PoolHealth pool = pool(HealthSettings.builder().fall(5), 1);
    Backend b = pool.backend("b0");
    assertThat(pool.onProbeResult(b, false, T0)).isEqualTo(Transition.PENDING);
    assertThat(pool.onProbeResult(b, true, T0)).isEqualTo(Transition.UNCHANGED);
    assertThat(pool.onProbeResult(b, false, true, T0)).isEqualTo(Transition.CHANGED);
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
    assertThat(b.passRun()).isZero();
    assertThat(b.failRun()).isEqualTo(1);
  }

  @Test
  void aDownBackendStillNeedsRisePassesAfterAFailFastFailure() {
    PoolHealth pool = pool(HealthSettings.builder().rise(2), 1);
    Backend b = pool.backend("b0");
    pool.onProbeResult(b, false, true, T0);
    assertThat(pool.onProbeResult(b, true, T0)).isEqualTo(Transition.PENDING);
    assertThat(pool.onProbeResult(b, false, true, T0)).isEqualTo(Transition.UNCHANGED);
    assertThat(pool.onProbeResult(b, true, T0)).isEqualTo(Transition.PENDING);
    assertThat(pool.onProbeResult(b, true, T0)).isEqualTo(Transition.CHANGED);
  }

  @Test
  void anUnknownBackendGoesDownOnAFailFastFailureAsOnAnyFailure() {
    PoolHealth pool = new PoolHealth(HealthSettings.defaults());
    Backend b = pool.add("b0");
    assertThat(pool.onProbeResult(b, false, true, T0)).isEqualTo(Transition.CHANGED);
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
  }

  @Test
  void failuresWithinTheWindowEjectWhenTheyReachWindowFailures() {
    PoolHealth pool = pool(window(3, 1_000), 4);
    Backend b = pool.backend("b0");
    assertThat(fail(pool, b, T0).kind()).isEqualTo(Kind.NOT_NEEDED);
    assertThat(pool.onRequestOutcome(b, true, Origin.UPSTREAM, T0 + 100).kind())
        .as("successes do not clear the window")
        .isEqualTo(Kind.NOT_NEEDED);
    assertThat(fail(pool, b, T0 + 500).kind()).isEqualTo(Kind.NOT_NEEDED);
    EjectionDecision d = fail(pool, b, T0 + 999);
    assertThat(d.kind()).isEqualTo(Kind.EJECTED);
    assertThat(d.window()).isTrue();
    assertThat(d.ejectedUntil()).isEqualTo(T0 + 999 + 30_000);
    assertThat(b.upstreamErrors()).as("an ejection resets the runs").isZero();
  }

  @Test
  void aFailureExactlyOneWindowOldIsOutsideIt() {
    PoolHealth pool = pool(window(2, 1_000), 4);
    Backend b = pool.backend("b0");
    fail(pool, b, T0);
    assertThat(fail(pool, b, T0 + 1_000).kind())
        .as("timestamps > now - failureWindow count")
        .isEqualTo(Kind.NOT_NEEDED);
    assertThat(fail(pool, b, T0 + 1_999).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void anEjectionEmptiesTheWindow() {
    PoolHealth pool = pool(window(2, 100_000), 4);
    Backend b = pool.backend("b0");
    fail(pool, b, T0);
    assertThat(fail(pool, b, T0).kind()).isEqualTo(Kind.EJECTED);
    long after = T0 + 30_000;
    assertThat(fail(pool, b, after).kind())
        .as("the failures before the ejection are gone")
        .isEqualTo(Kind.NOT_NEEDED);
    assertThat(fail(pool, b, after).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void failuresWhileEjectedStillCount() {
    PoolHealth pool = pool(window(2, 100_000), 4);
    Backend b = pool.backend("b0");
    fail(pool, b, T0);
    fail(pool, b, T0);
    assertThat(b.ejected()).isTrue();
    assertThat(fail(pool, b, T0 + 1).kind()).isEqualTo(Kind.NOT_NEEDED);
    assertThat(fail(pool, b, T0 + 2).kind()).isEqualTo(Kind.NOT_NEEDED);
    long ended = b.ejectedUntil();
    assertThat(fail(pool, b, ended).kind())
        .as("two failures counted while ejected and one now: the window is full")
        .isEqualTo(Kind.EJECTED);
  }

  @Test
  void aRefusedEjectionLeavesTheWindowAsItIs() {
    PoolHealth pool = pool(window(2, 100_000).maxEjectionPercent(0), 4);
    Backend b = pool.backend("b0");
    fail(pool, b, T0);
    EjectionDecision d = fail(pool, b, T0);
    assertThat(d.kind()).isEqualTo(Kind.REFUSED_BY_CAP);
    assertThat(d.window()).isTrue();
    assertThat(fail(pool, b, T0 + 1).kind())
        .as("still full: every further failure is another refused attempt")
        .isEqualTo(Kind.REFUSED_BY_CAP);
    assertThat(pool.refusedEjections()).isEqualTo(2);
  }

  @Test
  void localOriginFailuresCountOnlyWhenNotSplit() {
    PoolHealth split = pool(window(2, 100_000).consecutiveLocalOriginErrors(0), 4);
    Backend b = split.backend("b0");
    split.onRequestOutcome(b, false, Origin.LOCAL, T0);
    assertThat(split.onRequestOutcome(b, false, Origin.LOCAL, T0).kind())
        .isEqualTo(Kind.NOT_NEEDED);
    PoolHealth merged = pool(window(2, 100_000).splitLocalOrigin(false), 4);
    Backend c = merged.backend("b0");
    merged.onRequestOutcome(c, false, Origin.LOCAL, T0);
    assertThat(merged.onRequestOutcome(c, false, Origin.LOCAL, T0).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void theConsecutiveRuleIsNamedWhenBothTripOnOneOutcome() {
    PoolHealth pool = pool(window(3, 100_000).consecutiveErrors(3), 4);
    Backend b = pool.backend("b0");
    fail(pool, b, T0);
    fail(pool, b, T0);
    EjectionDecision d = fail(pool, b, T0);
    assertThat(d.kind()).isEqualTo(Kind.EJECTED);
    assertThat(d.window()).isFalse();
  }

  @Test
  void aDryRunWouldEjectAndEmptiesTheWindow() {
    PoolHealth pool = pool(window(2, 100_000).enforce(false), 4);
    Backend b = pool.backend("b0");
    fail(pool, b, T0);
    EjectionDecision d = fail(pool, b, T0);
    assertThat(d.kind()).isEqualTo(Kind.WOULD_EJECT);
    assertThat(d.window()).isTrue();
    assertThat(fail(pool, b, T0).kind()).isEqualTo(Kind.NOT_NEEDED);
  }

  @Test
  void windowFailuresAreValidated() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> HealthSettings.builder().windowFailures(1001).build())
        .hasMessageContaining("passive.windowFailures");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> HealthSettings.builder().failureWindowMs(0).build())
        .hasMessageContaining("passive.failureWindow");
  }
}
