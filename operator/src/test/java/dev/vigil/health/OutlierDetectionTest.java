package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.EjectionDecision.Kind;
import dev.vigil.health.HealthSettings.FailurePercentage;
import dev.vigil.health.HealthSettings.Latency;
import dev.vigil.health.HealthSettings.SuccessRate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The statistical rules at the sweep, on seeded traffic: when they eject and when they must not.
 */
class OutlierDetectionTest {
  private static final long T0 = 1_000_000;
  private static final SuccessRate SR = new SuccessRate(5, 100, 1.9, true);
  private static final FailurePercentage FP = new FailurePercentage(85, 5, 50, true);
  private static final Latency LAT = new Latency(3.0, 20, 200, true);

  private final Random random = new Random(20261129);
  private PoolHealth pool;

  private HealthSettingsBuilder rules() {
    return HealthSettings.builder().consecutiveErrors(0).consecutiveLocalOriginErrors(0);
  }

  private List<Backend> upPool(HealthSettings s, int n) {
    pool = new PoolHealth(s);
    List<Backend> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Backend b = pool.add("b" + i);
      pool.onProbeResult(b, true, T0);
      out.add(b);
    }
    return out;
  }

  /** {@code requests} outcomes, each ok with probability {@code okPercent}, in a seeded order. */
  private void traffic(Backend b, int requests, double okPercent) {
    for (int i = 0; i < requests; i++) {
      pool.onRequestOutcome(b, random.nextDouble() * 100 < okPercent, Origin.UPSTREAM, -1, T0);
    }
  }

  /** Exactly {@code failures} failed requests out of {@code requests}, shuffled. */
  private void exact(Backend b, int requests, int failures) {
    boolean[] ok = new boolean[requests];
    Arrays.fill(ok, failures, requests, true);
    for (int i = requests - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      boolean t = ok[i];
      ok[i] = ok[j];
      ok[j] = t;
    }
    for (boolean o : ok) {
      pool.onRequestOutcome(b, o, Origin.UPSTREAM, -1, T0);
    }
  }

  /** {@code samples} successful requests, latency normal around {@code meanMs} (10 % spread). */
  private void latencies(Backend b, int samples, double meanMs) {
    for (int i = 0; i < samples; i++) {
      long ms = Math.max(0, Math.round(meanMs + random.nextGaussian() * meanMs / 10));
      pool.onRequestOutcome(b, true, Origin.UPSTREAM, ms, T0);
    }
  }

  private SweepReport sweep() {
    return pool.sweepReport(T0 + 10_000);
  }

  // ---- success rate ----------------------------------------------------------------------------

  @Test
  void successRateEjectsTheBackendFarBelowItsPeers() {
    List<Backend> bs = upPool(rules().successRate(SR).build(), 10);
    exact(bs.get(0), 200, 76); // 62 %
    for (Backend b : bs.subList(1, 10)) {
      exact(b, 200, random.nextInt(5)); // 97.5 .. 100 %
    }
    SweepReport r = sweep();
    assertThat(r.ejections()).hasSize(1);
    Ejection e = r.ejections().get(0);
    assertThat(e.backendId()).isEqualTo("b0");
    assertThat(e.rule()).isEqualTo(Ejection.Rule.SUCCESS_RATE);
    assertThat(e.kind()).isEqualTo(Kind.EJECTED);
    assertThat(e.ejectedUntil()).isEqualTo(T0 + 10_000 + 30_000);
    assertThat(e.reason()).startsWith("success rate 62% < mean 9").contains("- 1.9 x stdev ");
    assertThat(bs.get(0).ejected()).isTrue();
    assertThat(bs.get(0).multiplier()).isEqualTo(1);
    assertThat(pool.ejections()).isEqualTo(1);
    assertThat(pool.snapshot().available()).doesNotContain("b0").hasSize(9);
  }

  @Test
  void successRateNeedsMinimumHostsWithEnoughVolume() {
    List<Backend> bs = upPool(rules().successRate(SR).build(), 10);
    traffic(bs.get(0), 200, 10);
    for (Backend b : bs.subList(1, 4)) {
      traffic(b, 200, 100); // with b0: 4 qualifying hosts, minimum 5
    }
    for (Backend b : bs.subList(4, 10)) {
      traffic(b, 99, 100); // below requestVolume: neither judged nor counted
    }
    assertThat(sweep().ejections()).isEmpty();
    assertThat(bs.get(0).ejected()).isFalse();
  }

  @Test
  void successRateDoesNotJudgeABackendBelowTheRequestVolume() {
    List<Backend> bs = upPool(rules().successRate(SR).build(), 10);
    traffic(bs.get(0), 99, 0); // every request failed, but too few to judge
    for (Backend b : bs.subList(1, 10)) {
      traffic(b, 200, 99);
    }
    assertThat(sweep().ejections()).isEmpty();
  }

  @Test
  void successRateEjectsNobodyInAFleetWideFailureWhereAllLookTheSame() {
    // 3 of 7 succeed everywhere: rates equal, stdev 0 up to rounding; even a small factor holds
    HealthSettings s =
        rules().successRate(new SuccessRate(5, 7, 0.1, true)).maxEjectionPercent(100).build();
    List<Backend> bs = upPool(s, 30);
    for (Backend b : bs) {
      exact(b, 70, 40);
    }
    assertThat(sweep().ejections()).isEmpty();
    assertThat(pool.ejections()).isZero();
  }

  @Test
  void countersStartOverAtEachSweep() {
    List<Backend> bs = upPool(rules().successRate(SR).build(), 10);
    traffic(bs.get(0), 60, 0);
    for (Backend b : bs.subList(1, 10)) {
      traffic(b, 60, 100);
    }
    assertThat(sweep().ejections()).isEmpty(); // 60 < requestVolume 100
    traffic(bs.get(0), 60, 0);
    for (Backend b : bs.subList(1, 10)) {
      traffic(b, 60, 100);
    }
    assertThat(pool.sweepReport(T0 + 20_000).ejections()).isEmpty(); // not 120: it restarted
    assertThat(bs.get(0).intervalRequests()).isZero();
  }

  // ---- failure percentage ----------------------------------------------------------------------

  @Test
  void failurePercentageEjectsABackendAtOrAboveTheThreshold() {
    List<Backend> bs = upPool(rules().failurePercentage(FP).build(), 10);
    exact(bs.get(0), 100, 90);
    exact(bs.get(1), 100, 84); // below 85: stays
    for (Backend b : bs.subList(2, 10)) {
      exact(b, 100, 1);
    }
    SweepReport r = sweep();
    assertThat(r.ejections())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.backendId()).isEqualTo("b0");
              assertThat(e.rule()).isEqualTo(Ejection.Rule.FAILURE_PERCENTAGE);
              assertThat(e.kind()).isEqualTo(Kind.EJECTED);
              assertThat(e.reason())
                  .isEqualTo("failure percentage 90% >= threshold 85% (90 of 100 requests failed)");
            });
  }

  @Test
  void failurePercentageNeedsMinimumHostsAndVolume() {
    List<Backend> bs = upPool(rules().failurePercentage(FP).build(), 10);
    exact(bs.get(0), 100, 100);
    for (Backend b : bs.subList(1, 4)) {
      exact(b, 100, 0);
    }
    for (Backend b : bs.subList(4, 10)) {
      exact(b, 49, 0);
    }
    assertThat(sweep().ejections()).isEmpty();
    exact(bs.get(0), 49, 49); // alone below the volume, the others qualifying
    for (Backend b : bs.subList(1, 10)) {
      exact(b, 100, 0);
    }
    assertThat(pool.sweepReport(T0 + 20_000).ejections()).isEmpty();
  }

  @Test
  void failurePercentageInAFleetWideFailureEjectsOnlyWhatTheCapAllowsWorstFirst() {
    // Envoy's failure percentage flags every backend above the threshold; the cap must hold
    List<Backend> bs = upPool(rules().failurePercentage(FP).maxEjectionPercent(10).build(), 20);
    for (int i = 0; i < 20; i++) {
      exact(bs.get(i), 100, 86 + i % 14); // 86..99 % failed, all above the threshold
    }
    SweepReport r = sweep();
    assertThat(r.ejections()).hasSize(20);
    List<Ejection> ejected = r.ejections().stream().filter(e -> e.kind() == Kind.EJECTED).toList();
    assertThat(ejected).hasSize(2);
    assertThat(r.ejections().subList(0, 2)).isEqualTo(ejected); // tried first: the worst
    assertThat(ejected).extracting(Ejection::backendId).containsExactly("b13", "b12");
    assertThat(r.ejections().subList(2, 20))
        .allSatisfy(e -> assertThat(e.kind()).isEqualTo(Kind.REFUSED_BY_CAP));
    assertThat(pool.refusedEjections()).isEqualTo(18);
    assertThat(pool.counts().ejected()).isEqualTo(2);
  }

  @Test
  void localOriginErrorsAreLeftOutWhenSplit() {
    List<Backend> bs = upPool(rules().failurePercentage(FP).build(), 10);
    for (int i = 0; i < 100; i++) {
      pool.onRequestOutcome(bs.get(0), false, Origin.LOCAL, 5, T0);
    }
    exact(bs.get(0), 60, 0);
    for (Backend b : bs.subList(1, 10)) {
      exact(b, 100, 0);
    }
    assertThat(sweep().ejections()).isEmpty();
    assertThat(bs.get(0).intervalRequests()).isZero(); // reset by the sweep

    pool.apply(pool.settings().toBuilder().splitLocalOrigin(false).build());
    for (int i = 0; i < 100; i++) {
      pool.onRequestOutcome(bs.get(0), false, Origin.LOCAL, 5, T0);
    }
    for (Backend b : bs.subList(1, 10)) {
      exact(b, 100, 0);
    }
    assertThat(pool.sweepReport(T0 + 20_000).ejections())
        .extracting(Ejection::backendId)
        .containsExactly("b0");
  }

  @Test
  void aBackendThatNeverFailedIsNotEjectedAtThresholdZero() {
    HealthSettings s = rules().failurePercentage(new FailurePercentage(0, 5, 50, true)).build();
    List<Backend> bs = upPool(s, 10);
    for (Backend b : bs) {
      exact(b, 100, 0);
    }
    assertThat(sweep().ejections()).isEmpty();
  }

  // ---- latency ---------------------------------------------------------------------------------

  @Test
  void latencyEjectsABackendFarSlowerThanTheMedianAndAboveTheFloor() {
    List<Backend> bs = upPool(rules().latency(LAT).build(), 10);
    latencies(bs.get(0), 40, 400);
    for (Backend b : bs.subList(1, 10)) {
      latencies(b, 40, 50);
    }
    SweepReport r = sweep();
    assertThat(r.ejections())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.backendId()).isEqualTo("b0");
              assertThat(e.rule()).isEqualTo(Ejection.Rule.LATENCY);
              assertThat(e.kind()).isEqualTo(Kind.EJECTED);
              assertThat(e.reason())
                  .startsWith("mean latency ")
                  .contains("> 3 x median ", "> floor 200ms");
            });
  }

  @Test
  void latencyDoesNotEjectASlowBackendUnderTheAbsoluteFloor() {
    List<Backend> bs = upPool(rules().latency(LAT).build(), 10);
    latencies(bs.get(0), 40, 150); // 7.5 x the median, but under 200 ms
    for (Backend b : bs.subList(1, 10)) {
      latencies(b, 40, 20);
    }
    assertThat(sweep().ejections()).isEmpty();
  }

  @Test
  void latencyDoesNotEjectALegitimatelySlowerBackendWithinFactorTimesMedian() {
    List<Backend> bs = upPool(rules().latency(LAT).build(), 10);
    latencies(bs.get(0), 40, 250); // 2.5 x the median, above the floor
    for (Backend b : bs.subList(1, 10)) {
      latencies(b, 40, 100);
    }
    assertThat(sweep().ejections()).isEmpty();
  }

  @Test
  void oneSlowRequestNeverEjects() {
    List<Backend> bs = upPool(rules().latency(LAT).build(), 10);
    latencies(bs.get(0), 19, 50);
    pool.onRequestOutcome(bs.get(0), true, Origin.UPSTREAM, 60_000, T0); // one very slow request
    for (Backend b : bs.subList(1, 10)) {
      latencies(b, 20, 50);
    }
    assertThat(sweep().ejections()).isEmpty();
    pool.onRequestOutcome(bs.get(1), true, Origin.UPSTREAM, 60_000, T0); // alone: 1 sample
    for (Backend b : bs.subList(2, 10)) {
      latencies(b, 20, 50);
    }
    assertThat(pool.sweepReport(T0 + 20_000).ejections()).isEmpty();
  }

  @Test
  void latencyNeedsMinimumHostsAndSamples() {
    List<Backend> bs = upPool(rules().latency(LAT).build(), 10);
    latencies(bs.get(0), 40, 2_000);
    for (Backend b : bs.subList(1, 4)) {
      latencies(b, 40, 50); // with b0: 4 qualifying, minimum 5
    }
    for (Backend b : bs.subList(4, 10)) {
      latencies(b, 19, 50); // under minimumSamples
    }
    assertThat(sweep().ejections()).isEmpty();
  }

  @Test
  void outcomesWithoutLatencyGiveNoSamples() {
    List<Backend> bs = upPool(rules().latency(LAT).build(), 10);
    for (int i = 0; i < 40; i++) {
      pool.onRequestOutcome(bs.get(0), true, Origin.UPSTREAM, T0); // the 4-argument form
    }
    for (Backend b : bs.subList(1, 10)) {
      latencies(b, 40, 50);
    }
    assertThat(sweep().ejections()).isEmpty();
    assertThat(bs.get(0).intervalLatencySamples()).isZero();
  }

  @Test
  void latencyRejectsAFleetThatIsSlowAllTogether() {
    List<Backend> bs = upPool(rules().latency(new Latency(1.0, 20, 0, true)).build(), 9);
    for (Backend b : bs) {
      for (int i = 0; i < 20; i++) {
        pool.onRequestOutcome(b, true, Origin.UPSTREAM, 900, T0);
      }
    }
    assertThat(sweep().ejections()).isEmpty();
  }

  // ---- dry run, the cap, the multiplier ---------------------------------------------------------

  @Test
  void passiveEnforceFalseMakesEveryRuleADryRun() {
    List<Backend> bs = upPool(rules().successRate(SR).enforce(false).build(), 10);
    traffic(bs.get(0), 200, 50);
    for (Backend b : bs.subList(1, 10)) {
      traffic(b, 200, 99);
    }
    SweepReport r = sweep();
    assertThat(r.ejections())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.WOULD_EJECT);
              assertThat(e.dryRun()).isTrue();
              assertThat(e.ejectedUntil()).isEqualTo(T0 + 10_000 + 30_000);
            });
    assertThat(bs.get(0).ejected()).isFalse();
    assertThat(bs.get(0).multiplier()).isZero();
    assertThat(pool.wouldEjectCount()).isEqualTo(1);
    assertThat(pool.ejections()).isZero();
  }

  @Test
  void aRuleWithItsOwnEnforceFalseIsADryRunWhileAnEnforcedRuleEjects() {
    HealthSettings s =
        rules().successRate(new SuccessRate(5, 100, 1.9, false)).failurePercentage(FP).build();
    List<Backend> bs = upPool(s, 20);
    exact(bs.get(0), 100, 90); // both rules flag it: the enforced one ejects, one entry
    exact(bs.get(1), 100, 60); // only the dry-run success rate flags it
    for (Backend b : bs.subList(2, 20)) {
      exact(b, 100, 0);
    }
    SweepReport r = sweep();
    assertThat(r.ejections())
        .extracting(Ejection::backendId, Ejection::rule, Ejection::kind)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(
                "b0", Ejection.Rule.FAILURE_PERCENTAGE, Kind.EJECTED),
            org.assertj.core.groups.Tuple.tuple(
                "b1", Ejection.Rule.SUCCESS_RATE, Kind.WOULD_EJECT));
  }

  @Test
  void dryRunIgnoresTheCapAndReportsEveryFlaggedBackend() {
    HealthSettings s = rules().failurePercentage(new FailurePercentage(85, 5, 50, false)).build();
    List<Backend> bs = upPool(s, 20);
    for (Backend b : bs) {
      exact(b, 100, 95);
    }
    SweepReport r = sweep();
    assertThat(r.ejections()).hasSize(20).allMatch(Ejection::dryRun);
    assertThat(pool.refusedEjections()).isZero();
  }

  @Test
  void theCapCountsConsecutiveErrorEjectionsToo() {
    HealthSettings s = HealthSettings.builder().successRate(SR).maxEjectionPercent(10).build();
    List<Backend> bs = upPool(s, 10);
    for (int i = 0; i < 5; i++) {
      pool.onRequestOutcome(bs.get(1), false, Origin.UPSTREAM, T0); // consecutive: ejected
    }
    assertThat(bs.get(1).ejected()).isTrue();
    for (int i = 0; i < 200; i++) {
      pool.onRequestOutcome(bs.get(0), i % 2 == 0, Origin.UPSTREAM, -1, T0); // no error runs
    }
    for (Backend b : bs.subList(2, 10)) {
      exact(b, 200, 0);
    }
    SweepReport r = sweep();
    assertThat(r.ejections())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.REFUSED_BY_CAP);
              assertThat(e.ejectedUntil()).isEqualTo(-1);
            });
    assertThat(pool.refusedEjections()).isEqualTo(1);
  }

  @Test
  void alwaysEjectOneLetsOneStatisticalEjectionThrough() {
    HealthSettings s =
        rules().failurePercentage(FP).maxEjectionPercent(0).alwaysEjectOne(true).build();
    List<Backend> bs = upPool(s, 10);
    exact(bs.get(0), 100, 100);
    exact(bs.get(1), 100, 95);
    for (Backend b : bs.subList(2, 10)) {
      exact(b, 100, 0);
    }
    assertThat(sweep().ejections())
        .extracting(Ejection::backendId, Ejection::kind)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("b0", Kind.EJECTED),
            org.assertj.core.groups.Tuple.tuple("b1", Kind.REFUSED_BY_CAP));
  }

  @Test
  void statisticalEjectionsShareTheMultiplierAndAnEjectedBackendIsNotJudgedAgain() {
    List<Backend> bs = upPool(rules().failurePercentage(FP).build(), 10);
    Backend bad = bs.get(0);
    long now = T0;
    for (long expected : new long[] {30_000, 60_000}) {
      exact(bad, 100, 100);
      for (Backend b : bs.subList(1, 10)) {
        exact(b, 100, 0);
      }
      now += 10_000;
      SweepReport r = pool.sweepReport(now);
      assertThat(r.ejections())
          .singleElement()
          .satisfies(e -> assertThat(e.kind()).isEqualTo(Kind.EJECTED));
      assertThat(bad.ejectedUntil()).isEqualTo(now + expected);
      // while ejected: still failing, not judged again
      exact(bad, 100, 100);
      for (Backend b : bs.subList(1, 10)) {
        exact(b, 100, 0);
      }
      assertThat(pool.sweepReport(now + 1).ejections()).isEmpty();
      now = bad.ejectedUntil();
      pool.expireEjections(now);
    }
    assertThat(bad.multiplier()).isEqualTo(2);
  }

  @Test
  void theIntSweepStillDecaysAndEjects() {
    List<Backend> bs = upPool(rules().failurePercentage(FP).build(), 10);
    exact(bs.get(0), 100, 100);
    for (Backend b : bs.subList(1, 10)) {
      exact(b, 100, 0);
    }
    assertThat(pool.sweep(T0 + 10_000)).isZero();
    assertThat(bs.get(0).ejected()).isTrue();
  }

  @Test
  void aRemovedBackendIsForgotten() {
    List<Backend> bs = upPool(rules().failurePercentage(FP).build(), 10);
    exact(bs.get(0), 100, 100);
    for (Backend b : bs.subList(1, 10)) {
      exact(b, 100, 0);
    }
    pool.remove(bs.get(0));
    assertThat(bs.get(0).intervalRequests()).isZero();
    assertThat(sweep().ejections()).isEmpty();
  }

  @Test
  void nothingIsCountedWhileNoRuleIsOn() {
    List<Backend> bs = upPool(HealthSettings.defaults(), 3);
    pool.onRequestOutcome(bs.get(0), true, Origin.UPSTREAM, 10, T0);
    assertThat(bs.get(0).intervalRequests()).isZero();
    assertThat(sweep()).isSameAs(SweepReport.NOTHING);
  }

  @Test
  void medianAgreesWithSorting() {
    for (int round = 0; round < 2_000; round++) {
      int n = 1 + random.nextInt(60);
      double[] a = new double[n];
      int distinct = 1 + random.nextInt(n + 3);
      for (int i = 0; i < n; i++) {
        a[i] = random.nextInt(distinct) * 1.5;
      }
      double[] sorted = a.clone();
      Arrays.sort(sorted);
      double want =
          n % 2 == 1 ? sorted[n / 2] : sorted[n / 2 - 1] + (sorted[n / 2] - sorted[n / 2 - 1]) / 2;
      assertThat(OutlierDetector.median(a, n)).as("round %d", round).isEqualTo(want);
    }
  }
}
