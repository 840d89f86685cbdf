package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.EjectionDecision.Kind;
import org.junit.jupiter.api.Test;

class EjectionTest {
  private static final long T0 = 1_000_000;

  private PoolHealth pool = new PoolHealth(HealthSettings.defaults());

  private Backend up(String id) {
    Backend b = pool.add(id);
    pool.onProbeResult(b, true, T0);
    return b;
  }

  private void upPool(int n) {
    for (int i = 0; i < n; i++) {
      up("b" + i);
    }
  }

  private EjectionDecision errors(Backend b, int n, long now) {
    EjectionDecision last = null;
    for (int i = 0; i < n; i++) {
      last = pool.onRequestOutcome(b, false, Origin.UPSTREAM, now);
    }
    return last;
  }

  @Test
  void fiveConsecutiveErrorsEjectForThirtySeconds() {
    upPool(10);
    Backend b = pool.backend("b0");
    assertThat(errors(b, 4, T0).kind()).isEqualTo(Kind.NOT_NEEDED);
    EjectionDecision d = errors(b, 1, T0);
    assertThat(d.kind()).isEqualTo(Kind.EJECTED);
    assertThat(d.ejectedUntil()).isEqualTo(T0 + 30_000);
    assertThat(b.ejected()).isTrue();
    assertThat(b.multiplier()).isEqualTo(1);
    assertThat(pool.snapshot().available()).doesNotContain("b0").hasSize(9);
    assertThat(pool.snapshot().counts().ejected()).isEqualTo(1);
  }

  @Test
  void secondEjectionWithoutSweepLastsSixtySeconds() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    long after = T0 + 30_000;
    EjectionDecision d = errors(b, 5, after);
    assertThat(d.kind()).isEqualTo(Kind.EJECTED);
    assertThat(d.ejectedUntil()).isEqualTo(after + 60_000);
    assertThat(b.multiplier()).isEqualTo(2);
  }

  @Test
  void ejectionTimeIsCappedAtMaxEjectionTime() {
    pool = new PoolHealth(HealthSettings.builder().maxEjectionTimeMs(70_000).build());
    upPool(10);
    Backend b = pool.backend("b0");
    long now = T0;
    long[] expected = {30_000, 60_000, 70_000, 70_000};
    for (long duration : expected) {
      EjectionDecision d = errors(b, 5, now);
      assertThat(d.ejectedUntil() - now).isEqualTo(duration);
      now = d.ejectedUntil();
    }
    assertThat(b.multiplier()).isEqualTo(3); // stops growing once base x m reaches the maximum
  }

  @Test
  void successResetsTheErrorRun() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 4, T0);
    pool.onRequestOutcome(b, true, Origin.UPSTREAM, T0);
    assertThat(b.upstreamErrors()).isZero();
    assertThat(errors(b, 4, T0).kind()).isEqualTo(Kind.NOT_NEEDED);
    assertThat(b.ejected()).isFalse();
  }

  @Test
  void successResetsBothUpstreamAndLocalOriginRuns() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 3, T0);
    pool.onRequestOutcome(b, false, Origin.LOCAL, T0);
    pool.onRequestOutcome(b, true, Origin.LOCAL, T0);
    assertThat(b.upstreamErrors()).isZero();
    assertThat(b.localOriginErrors()).isZero();
  }

  @Test
  void localOriginErrorsCountOnTheirOwnRunWhenSplit() {
    pool = new PoolHealth(HealthSettings.builder().consecutiveLocalOriginErrors(3).build());
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 4, T0);
    pool.onRequestOutcome(b, false, Origin.LOCAL, T0);
    pool.onRequestOutcome(b, false, Origin.LOCAL, T0);
    assertThat(b.ejected()).isFalse();
    assertThat(b.upstreamErrors()).isEqualTo(4);
    EjectionDecision d = pool.onRequestOutcome(b, false, Origin.LOCAL, T0);
    assertThat(d.kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void localAndUpstreamErrorsShareOneRunWhenNotSplit() {
    pool = new PoolHealth(HealthSettings.builder().splitLocalOrigin(false).build());
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 2, T0);
    pool.onRequestOutcome(b, false, Origin.LOCAL, T0);
    pool.onRequestOutcome(b, false, Origin.LOCAL, T0);
    assertThat(b.upstreamErrors()).isEqualTo(4);
    assertThat(errors(b, 1, T0).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void sweepDecaysTheMultiplierOfABackendNeitherEjectedNorErring() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    errors(b, 5, T0 + 30_000);
    assertThat(b.multiplier()).isEqualTo(2);
    long end = T0 + 90_000;
    assertThat(pool.sweep(end - 1)).isZero(); // still ejected
    assertThat(pool.sweep(end)).isEqualTo(1); // the ejection ends first, then decay
    assertThat(b.multiplier()).isEqualTo(1);
    pool.sweep(end + 10_000);
    assertThat(b.multiplier()).isZero();
    assertThat(errors(b, 5, end + 20_000).ejectedUntil()).isEqualTo(end + 20_000 + 30_000);
  }

  @Test
  void sweepDoesNotDecayABackendThatIsErring() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    errors(b, 1, T0 + 30_000);
    pool.sweep(T0 + 40_000);
    assertThat(b.multiplier()).isEqualTo(1);
    pool.onRequestOutcome(b, true, Origin.UPSTREAM, T0 + 41_000);
    pool.sweep(T0 + 50_000);
    assertThat(b.multiplier()).isZero();
  }

  @Test
  void errorsWhileEjectedCountButStartNoNewEjectionUntilItEnds() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    assertThat(errors(b, 7, T0 + 1_000).kind()).isEqualTo(Kind.NOT_NEEDED);
    assertThat(b.upstreamErrors()).isEqualTo(7);
    assertThat(b.ejectedUntil()).isEqualTo(T0 + 30_000);
    EjectionDecision d = errors(b, 1, T0 + 30_000);
    assertThat(d.kind()).isEqualTo(Kind.EJECTED);
    assertThat(d.ejectedUntil()).isEqualTo(T0 + 30_000 + 60_000);
  }

  @Test
  void ejectionEndsAtItsDeadlineOnExpireAndNextEjectionEndTellsWhen() {
    upPool(10);
    Backend b = pool.backend("b0");
    assertThat(pool.nextEjectionEnd()).isEqualTo(Long.MAX_VALUE);
    errors(b, 5, T0);
    assertThat(pool.nextEjectionEnd()).isEqualTo(T0 + 30_000);
    pool.expireEjections(T0 + 29_999);
    assertThat(b.ejected()).isTrue();
    long version = pool.version();
    pool.expireEjections(T0 + 30_000);
    assertThat(b.ejected()).isFalse();
    assertThat(pool.version()).isNotEqualTo(version);
    assertThat(pool.snapshot().available()).contains("b0");
    assertThat(pool.nextEjectionEnd()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void anyTimedEventOfAnyBackendEndsDueEjections() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    pool.onProbeResult(pool.backend("b5"), true, T0 + 30_000);
    assertThat(b.ejected()).isFalse();
  }

  @Test
  void capRefusesASecondConcurrentEjectionInAPoolOfTenAndCountsIt() {
    upPool(10);
    assertThat(errors(pool.backend("b0"), 5, T0).kind()).isEqualTo(Kind.EJECTED);
    assertThat(errors(pool.backend("b1"), 5, T0)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    assertThat(pool.refusedEjections()).isEqualTo(1);
    assertThat(pool.backend("b1").ejected()).isFalse();
    assertThat(pool.snapshot().counts().ejected()).isEqualTo(1);
  }

  @Test
  void refusedRunIsNotResetSoEachFurtherErrorIsAnotherRefusal() {
    upPool(10);
    errors(pool.backend("b0"), 5, T0);
    Backend b1 = pool.backend("b1");
    errors(b1, 5, T0);
    assertThat(errors(b1, 1, T0)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    assertThat(errors(b1, 1, T0)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    assertThat(pool.refusedEjections()).isEqualTo(3);
    assertThat(b1.upstreamErrors()).isEqualTo(7);
    // once the first ejection ends, the very next error ejects b1
    assertThat(errors(b1, 1, T0 + 30_000).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void capEjectsNobodyInAPoolOfFiveAtTenPercent() {
    upPool(5);
    for (int i = 0; i < 5; i++) {
      assertThat(errors(pool.backend("b" + i), 5, T0)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    }
    assertThat(pool.snapshot().counts().ejected()).isZero();
  }

  @Test
  void alwaysEjectOneLetsExactlyOneThroughInAPoolOfFive() {
    pool = new PoolHealth(HealthSettings.builder().alwaysEjectOne(true).build());
    upPool(5);
    assertThat(errors(pool.backend("b0"), 5, T0).kind()).isEqualTo(Kind.EJECTED);
    for (int i = 1; i < 5; i++) {
      assertThat(errors(pool.backend("b" + i), 5, T0)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    }
    assertThat(pool.snapshot().counts().ejected()).isEqualTo(1);
  }

  @Test
  void capDenominatorIsTheBackendsThatAreNotDraining() {
    upPool(10);
    pool.setDraining("b9", true);
    // 1 of 9 not-draining backends is 11 % > 10 %: refused
    assertThat(errors(pool.backend("b0"), 5, T0)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    pool.setDraining("b9", false);
    assertThat(errors(pool.backend("b0"), 1, T0).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void passingProbeEndsAnEjectionEarlyWithUnejectOnActivePassAndKeepsTheMultiplier() {
    pool = new PoolHealth(HealthSettings.builder().unejectOnActivePass(true).build());
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    pool.onProbeResult(b, true, T0 + 5_000);
    assertThat(b.ejected()).isFalse();
    assertThat(b.ejectedUntil()).isEqualTo(T0 + 5_000);
    assertThat(b.multiplier()).isEqualTo(1);
    assertThat(pool.snapshot().available()).contains("b0");
    assertThat(pool.nextEjectionEnd()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void passingProbeDoesNotEndAnEjectionWithUnejectOnActivePassOff() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    pool.onProbeResult(b, true, T0 + 5_000);
    assertThat(b.ejected()).isTrue();
    assertThat(pool.snapshot().available()).doesNotContain("b0");
  }

  @Test
  void zeroConsecutiveErrorsDisablesEjection() {
    pool = new PoolHealth(HealthSettings.builder().consecutiveErrors(0).build());
    upPool(10);
    assertThat(errors(pool.backend("b0"), 50, T0)).isEqualTo(EjectionDecision.NOT_NEEDED);
    assertThat(pool.backend("b0").ejected()).isFalse();
  }

  @Test
  void dryRunReportsTheWouldBeEjectionAndEjectsNobody() {
    pool = new PoolHealth(HealthSettings.builder().enforce(false).build());
    upPool(10);
    Backend b = pool.backend("b0");
    EjectionDecision d = errors(b, 5, T0);
    assertThat(d.kind()).isEqualTo(Kind.WOULD_EJECT);
    assertThat(d.ejectedUntil()).isEqualTo(T0 + 30_000);
    assertThat(b.ejected()).isFalse();
    assertThat(b.upstreamErrors()).isZero();
    assertThat(pool.wouldEjectCount()).isEqualTo(1);
    assertThat(pool.snapshot().available()).hasSize(10);
  }

  @Test
  void ejectedDownBackendStaysUnavailableAfterTheEjectionEnds() {
    upPool(10);
    Backend b = pool.backend("b0");
    errors(b, 5, T0);
    for (int i = 0; i < 3; i++) {
      pool.onProbeResult(b, false, T0 + i);
    }
    pool.expireEjections(T0 + 30_000);
    assertThat(b.ejected()).isFalse();
    assertThat(b.available()).isFalse();
  }
}
