package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PanicTest {
  private static final long T0 = 1_000_000;

  private PoolHealth pool = new PoolHealth(HealthSettings.defaults());

  private void pool(HealthSettings s, String... upOrDown) {
    pool = new PoolHealth(s);
    for (int i = 0; i < upOrDown.length; i++) {
      Backend b = pool.add("b" + i);
      pool.onProbeResult(b, upOrDown[i].equals("U"), T0);
    }
  }

  private void setUp(String id, boolean up) {
    Backend b = pool.backend(id);
    for (int i = 0; i < 3; i++) {
      pool.onProbeResult(b, up, T0);
    }
  }

  @Test
  void threeOfFourDownAtThresholdFiftyPublishesAllFourAsReady() {
    pool(HealthSettings.defaults(), "U", "D", "D", "D");
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isTrue();
    assertThat(s.ready()).containsExactlyInAnyOrder("b0", "b1", "b2", "b3");
    assertThat(s.available()).containsExactly("b0");
  }

  @Test
  void halfTheBackendsAvailableIsNotPanic() {
    pool(HealthSettings.defaults(), "U", "U", "D", "D");
    assertThat(pool.snapshot().panic()).isFalse();
    assertThat(pool.snapshot().ready()).containsExactlyInAnyOrder("b0", "b1");
  }

  @Test
  void thresholdZeroDisablesPanicAndPublishesOnlyTheSurvivor() {
    pool(HealthSettings.builder().panicThresholdPercent(0).build(), "U", "D", "D", "D");
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isFalse();
    assertThat(s.ready()).containsExactly("b0");
  }

  @Test
  void thresholdZeroWithNoSurvivorPublishesAnEmptySet() {
    pool(HealthSettings.builder().panicThresholdPercent(0).build(), "D", "D", "D", "D");
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isFalse();
    assertThat(s.ready()).isEmpty();
  }

  @Test
  void ejectedBackendsArePublishedReadyInPanic() {
    pool(HealthSettings.builder().maxEjectionPercent(100).build(), "U", "U", "D", "D");
    for (int i = 0; i < 5; i++) {
      pool.onRequestOutcome(pool.backend("b0"), false, Origin.UPSTREAM, T0);
    }
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isTrue();
    assertThat(s.ready()).containsExactlyInAnyOrder("b0", "b1", "b2", "b3");
  }

  @Test
  void drainingBackendsAreNeverReadyNotEvenInPanic() {
    pool(HealthSettings.defaults(), "U", "D", "D", "D", "U");
    pool.setDraining("b4", true);
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isTrue();
    assertThat(s.ready()).containsExactlyInAnyOrder("b0", "b1", "b2", "b3");
    assertThat(s.drainingServing()).containsExactly("b4");
    assertThat(s.counts().draining()).isEqualTo(1);
  }

  @Test
  void drainingHalfThePoolDoesNotTriggerPanic() {
    pool(HealthSettings.defaults(), "U", "U", "U", "U", "U", "U");
    for (int i = 0; i < 3; i++) {
      pool.setDraining("b" + i, true);
    }
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isFalse();
    assertThat(s.ready()).containsExactlyInAnyOrder("b3", "b4", "b5");
    assertThat(s.counts().decided()).isEqualTo(3);
  }

  @Test
  void unknownBackendsLeaveThePanicDenominatorSoANewPoolDoesNotPanicBeforeItIsProbed() {
    pool = new PoolHealth(HealthSettings.defaults());
    for (int i = 0; i < 10; i++) {
      pool.add("b" + i);
    }
    assertThat(pool.snapshot().panic()).isFalse();
    pool.onProbeResult("b0", true, T0);
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isFalse();
    assertThat(s.ready()).containsExactly("b0");
    assertThat(s.counts().unknown()).isEqualTo(9);
    assertThat(s.counts().decided()).isEqualTo(1);
  }

  @Test
  void unknownBackendsAreNotPublishedReadyInPanic() {
    pool(HealthSettings.defaults(), "U", "D", "D");
    pool.add("new");
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.panic()).isTrue();
    assertThat(s.ready()).containsExactlyInAnyOrder("b0", "b1", "b2");
  }

  @Test
  void panicBandKeepsThePoolInPanicUntilTheExitShareIsReached() {
    pool(
        HealthSettings.builder().panicThresholdPercent(50).panicExitPercent(80).build(),
        "U",
        "D",
        "D",
        "D",
        "D",
        "D",
        "D",
        "D",
        "D",
        "D");
    assertThat(pool.panic()).isTrue();
    for (int i = 1; i <= 6; i++) {
      setUp("b" + i, true); // 2/10 .. 7/10 available: inside the band from 5/10 on
      assertThat(pool.panic()).as("%d of 10 up", i + 1).isTrue();
    }
    setUp("b7", true); // 8/10 = exit share: leave
    assertThat(pool.panic()).isFalse();
    setUp("b7", false); // 7/10: above the threshold, no re-entry
    assertThat(pool.panic()).isFalse();
    setUp("b6", false);
    setUp("b5", false); // 5/10: still not below 50 %
    assertThat(pool.panic()).isFalse();
    setUp("b4", false); // 4/10 < 50 %: enter
    assertThat(pool.panic()).isTrue();
  }

  @Test
  void exitEqualToThresholdHasNoBand() {
    pool(HealthSettings.defaults(), "U", "D", "D", "D");
    assertThat(pool.panic()).isTrue();
    setUp("b1", true); // 2/4 = 50 %
    assertThat(pool.panic()).isFalse();
    setUp("b1", false);
    assertThat(pool.panic()).isTrue();
  }

  @Test
  void appliedThresholdReevaluatesPanicAtOnce() {
    pool(HealthSettings.defaults(), "U", "D", "D", "D");
    long version = pool.version();
    pool.apply(HealthSettings.builder().panicThresholdPercent(0).build());
    assertThat(pool.panic()).isFalse();
    assertThat(pool.version()).isNotEqualTo(version);
    assertThat(pool.snapshot().ready()).containsExactly("b0");
  }
}
