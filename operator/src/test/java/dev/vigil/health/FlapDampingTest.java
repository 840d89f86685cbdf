package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Flap damping, docs/design.md §2.1, rule by rule (defaults: 1000, 3000, 750, 60s, 300s). */
class FlapDampingTest {
  private static final DampingSettings D = DampingSettings.defaults();
  private static final HealthSettings QUICK =
      HealthSettings.builder().rise(1).fall(1).panicThresholdPercent(0).damping(D).build();

  private final PoolHealth pool = new PoolHealth(QUICK);
  private final List<String> heard = new ArrayList<>();

  FlapDampingTest() {
    pool.dampingListener(
        new DampingListener() {
          @Override
          public void damped(Backend b) {
            heard.add("damped " + b.id() + " until " + b.releaseAt());
          }

          @Override
          public void released(Backend b) {
            heard.add("released " + b.id());
          }
        });
  }

  /** Up at t=0 (the first probe is no flap), then one transition per second, per letter. */
  private Backend flapping(String id, String results) {
    Backend b = pool.add(id);
    pool.onProbeResult(b, true, 0);
    long t = 0;
    for (char c : results.toCharArray()) {
      pool.onProbeResult(b, c == 'P', t += 1_000);
    }
    return b;
  }

  @Test
  void theFirstProbeOfAnUnknownBackendIsNoFlap() {
    Backend b = pool.add("a");
    pool.onProbeResult(b, false, 0);
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
    assertThat(b.merit()).isZero();
  }

  @Test
  void eachTransitionDecaysTheMeritToNowThenAddsThePenalty() {
    Backend b = flapping("a", "F");
    assertThat(b.merit()).isEqualTo(1_000);
    assertThat(b.meritAt()).isEqualTo(1_000);
    pool.onProbeResult(b, true, 61_000); // one half-life later
    assertThat(b.merit()).isCloseTo(1_500, within(1e-9));
    assertThat(b.damped()).isFalse();
  }

  @Test
  void aBackendIsDampedRightAfterThePenaltyThatTakesItsMeritAboveSuppress() {
    Backend b = flapping("a", "FPF");
    assertThat(b.merit()).as("three flaps a second apart").isLessThan(3_000).isGreaterThan(2_900);
    assertThat(b.damped()).isFalse();
    pool.onProbeResult(b, true, 4_000);
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    assertThat(b.damped()).isTrue();
    assertThat(b.available()).isFalse();
    assertThat(pool.snapshot().available()).isEmpty();
    assertThat(pool.counts().damped()).isEqualTo(1);
    assertThat(pool.counts().up()).isEqualTo(1);
    assertThat(heard).containsExactly("damped a until " + b.releaseAt());
  }

  @Test
  void passesAndFailsThatChangeNoStateAddNoPenalty() {
    Backend b = flapping("a", "");
    for (int i = 1; i < 20; i++) {
      pool.onProbeResult(b, i % 2 == 0, i * 1_000L);
    }
    assertThat(b.merit()).as("fall 1: each fail is a flap").isGreaterThan(0);
    PoolHealth slow = new PoolHealth(QUICK.toBuilder().rise(2).fall(3).build());
    Backend s = slow.add("s");
    slow.onProbeResult(s, true, 0);
    for (int i = 1; i < 20; i++) {
      slow.onProbeResult(s, i % 2 == 0, i * 1_000L);
    }
    assertThat(s.merit()).as("a strictly alternating backend never flips").isZero();
  }

  @Test
  void aDampedBackendIsReleasedAtTheFirstMillisecondItsMeritIsAtOrBelowReuse() {
    Backend b = flapping("a", "FPFP");
    long at = b.releaseAt();
    double m = b.merit();
    long t0 = b.meritAt();
    assertThat(m * Math.pow(2, -(double) (at - t0) / 60_000)).isLessThanOrEqualTo(750);
    assertThat(m * Math.pow(2, -(double) (at - 1 - t0) / 60_000)).isGreaterThan(750);
    assertThat(pool.nextRelease()).isEqualTo(at);
    pool.releaseDamped(at - 1);
    assertThat(b.damped()).isTrue();
    pool.releaseDamped(at);
    assertThat(b.damped()).isFalse();
    assertThat(b.available()).isTrue();
    assertThat(pool.nextRelease()).isEqualTo(Long.MAX_VALUE);
    assertThat(heard).last().isEqualTo("released a");
    assertThat(pool.releases()).isEqualTo(1);
  }

  @Test
  void anyTimedEventAfterTheReleaseTimeReleases() {
    Backend b = flapping("a", "FPFP");
    Backend other = pool.add("b");
    pool.onRequestOutcome(other, true, Origin.UPSTREAM, b.releaseAt() + 5);
    assertThat(b.damped()).isFalse();
  }

  @Test
  void aFlapWhileDampedPushesTheReleaseLater() {
    Backend b = flapping("a", "FPFP");
    long first = b.releaseAt();
    pool.onProbeResult(b, false, 10_000);
    assertThat(b.damped()).isTrue();
    assertThat(b.releaseAt()).isGreaterThan(first);
    assertThat(pool.nextRelease()).isEqualTo(b.releaseAt());
    assertThat(pool.dampings()).as("damped once").isEqualTo(1);
  }

  @Test
  void theCeilingEndsEverySuppressionWithinMaxSuppressTimeOfTheLastFlap() {
    Backend b = flapping("a", "");
    for (int i = 0; i < 200; i++) {
      pool.onProbeResult(b, i % 2 == 1, 1_000);
    }
    assertThat(b.merit()).isEqualTo(D.ceiling());
    assertThat(D.ceiling()).isCloseTo(750 * 32, within(1e-6));
    assertThat(b.releaseAt() - 1_000).isBetween(299_999L, 300_000L);
  }

  @Test
  void aDampedBackendThatIsDownShowsDownAndStaysUnavailableUntilBothEnd() {
    Backend b = flapping("a", "FPFPF");
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
    assertThat(b.damped()).isTrue();
    pool.onProbeResult(b, true, 6_000);
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    assertThat(b.available()).as("still damped").isFalse();
  }

  @Test
  void aDampedBackendIsDecidedAndPublishedInPanic() {
    PoolHealth p = new PoolHealth(QUICK.toBuilder().panicThresholdPercent(50).build());
    Backend a = p.add("a");
    Backend c = p.add("c");
    p.onProbeResult(a, true, 0);
    p.onProbeResult(c, true, 0);
    long t = 0;
    for (char r : "FPFP".toCharArray()) {
      p.onProbeResult(a, r == 'P', t += 1_000);
    }
    assertThat(a.damped()).isTrue();
    assertThat(p.counts().decided()).isEqualTo(2);
    assertThat(p.panic()).as("1 of 2 available is not below 50%").isFalse();
    assertThat(p.snapshot().ready()).containsExactly("c");
    p.onProbeResult(c, false, t + 1);
    assertThat(p.panic()).isTrue();
    assertThat(p.snapshot().ready()).containsExactlyInAnyOrder("a", "c");
  }

  @Test
  void aDrainingDampedBackendIsNotServing() {
    Backend b = flapping("a", "FPFP");
    pool.setDraining(b, true);
    assertThat(pool.snapshot().drainingServing()).isEmpty();
    pool.releaseDamped(b.releaseAt());
    assertThat(pool.snapshot().drainingServing()).containsExactly("a");
  }

  @Test
  void dampingOffAddsNoMeritAndTurningItOffReleasesNow() {
    PoolHealth off = new PoolHealth(QUICK.toBuilder().damping(null).build());
    Backend x = off.add("x");
    off.onProbeResult(x, true, 0);
    for (int i = 1; i < 10; i++) {
      off.onProbeResult(x, i % 2 == 0, i * 1_000L);
    }
    assertThat(x.merit()).isZero();
    assertThat(x.damped()).isFalse();

    Backend b = flapping("a", "FPFP");
    long version = pool.version();
    pool.apply(QUICK.toBuilder().damping(null).build());
    assertThat(b.damped()).isFalse();
    assertThat(pool.snapshot().available()).containsExactly("a");
    assertThat(pool.version()).isNotEqualTo(version);
    assertThat(heard).last().isEqualTo("released a");
  }

  @Test
  void newThresholdsReTimeTheRelease() {
    Backend b = flapping("a", "FPFP");
    long before = b.releaseAt();
    pool.apply(
        QUICK.toBuilder().damping(new DampingSettings(1000, 3000, 300, 60_000, 300_000)).build());
    assertThat(b.releaseAt()).isGreaterThan(before);
    assertThat(pool.nextRelease()).isEqualTo(b.releaseAt());
  }

  @Test
  void aRestoreKeepsADampedBackendDampedUntilTheSameRelease() {
    Backend b = flapping("a", "FPFP");
    long release = b.releaseAt();
    DampingState published = new DampingState(b.merit(), b.meritAt(), true);

    PoolHealth restarted = new PoolHealth(QUICK);
    Backend r = restarted.add("a");
    restarted.restore(r, ActiveState.UP, 0, 0, published, 30_000);
    assertThat(r.damped()).isTrue();
    assertThat(r.releaseAt()).isEqualTo(release);
    assertThat(restarted.nextRelease()).isEqualTo(release);
    assertThat(restarted.snapshot().available()).isEmpty();

    Backend late = restarted.add("late");
    restarted.restore(late, ActiveState.UP, 0, 0, published, release);
    assertThat(late.damped()).as("restored after its release time").isFalse();
    assertThat(late.merit()).isEqualTo(published.merit());

    Backend notDamped = restarted.add("n");
    restarted.restore(
        notDamped, ActiveState.UP, 0, 0, new DampingState(2_900, 30_000, false), 30_000);
    assertThat(notDamped.damped()).as("a restore never damps anew").isFalse();
  }

  @Test
  void phasesFollowTheStreak() {
    PoolHealth p = new PoolHealth(HealthSettings.defaults()); // rise 2, fall 3
    Backend b = p.add("a");
    assertThat(b.phase()).isEqualTo(ProbePhase.NORMAL);
    p.onProbeResult(b, true, 1);
    assertThat(b.phase()).isEqualTo(ProbePhase.NORMAL);
    p.onProbeResult(b, false, 2);
    assertThat(b.phase()).as("Up with a fail run").isEqualTo(ProbePhase.FAST);
    p.onProbeResult(b, false, 3);
    assertThat(b.phase()).isEqualTo(ProbePhase.FAST);
    p.onProbeResult(b, false, 4);
    assertThat(b.phase()).as("Down, no pass run").isEqualTo(ProbePhase.DOWN);
    p.onProbeResult(b, true, 5);
    assertThat(b.phase()).as("Down with a pass run").isEqualTo(ProbePhase.FAST);
    p.onProbeResult(b, false, 6);
    assertThat(b.phase()).isEqualTo(ProbePhase.DOWN);
    p.onProbeResult(b, true, 7);
    p.onProbeResult(b, true, 8);
    assertThat(b.phase()).isEqualTo(ProbePhase.NORMAL);
    assertThat(b.view().phase()).isEqualTo(ProbePhase.NORMAL);
  }

  @Test
  void settingsCheckTheDampingAndPhaseFields() {
    assertThatThrownBy(() -> new DampingSettings(1000, 3000, 3000, 60_000, 300_000))
        .hasMessageContaining("damping.reuseThreshold");
    assertThatThrownBy(() -> new DampingSettings(1000, 3000, 750, 999, 300_000))
        .hasMessageContaining("damping.halfLife");
    assertThatThrownBy(() -> HealthSettings.builder().fastIntervalMs(2_000L).build())
        .hasMessageContaining("active.fastInterval")
        .hasMessageContaining("above active.timeout");
    assertThatThrownBy(() -> HealthSettings.builder().downIntervalMs(99L).timeoutMs(50).build())
        .hasMessageContaining("active.downInterval");
    HealthSettings s = HealthSettings.builder().intervalMs(10_000).build();
    assertThat(s.fastIntervalMs()).isEqualTo(10_000);
    assertThat(s.downIntervalMs()).isEqualTo(10_000);
    assertThat(s.damps()).isFalse();
    HealthSettings t = s.toBuilder().fastIntervalMs(3_000L).build();
    assertThat(t.intervalMs(ProbePhase.FAST)).isEqualTo(3_000);
    assertThat(t.intervalMs(ProbePhase.DOWN)).isEqualTo(10_000);
    assertThat(t.toBuilder().intervalMs(20_000).build().downIntervalMs())
        .as("an unset downInterval follows the interval")
        .isEqualTo(20_000);
  }
}
