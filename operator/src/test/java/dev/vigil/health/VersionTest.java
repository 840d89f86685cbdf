package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class VersionTest {
  private static final long T0 = 1_000_000;

  private final PoolHealth pool = new PoolHealth(HealthSettings.defaults());

  @Test
  void versionMovesWhenTheAvailableSetChangesAndOnlyThen() {
    Backend a = pool.add("a");
    Backend b = pool.add("b");
    long v0 = pool.version();
    pool.onProbeResult(a, true, T0);
    long v1 = pool.version();
    assertThat(v1).isNotEqualTo(v0);
    pool.onProbeResult(a, true, T0);
    pool.onProbeResult(a, false, T0);
    pool.onRequestOutcome(a, false, Origin.UPSTREAM, T0);
    pool.sweep(T0);
    pool.add("c");
    assertThat(pool.version()).isEqualTo(v1);
    pool.onProbeResult(b, true, T0);
    assertThat(pool.version()).isNotEqualTo(v1);
  }

  @Test
  void aFirstResultOutsidePanicThatLeavesTheSetAloneKeepsTheVersion() {
    pool.onProbeResult(pool.add("a"), true, T0);
    pool.onProbeResult(pool.add("b"), true, T0);
    long v = pool.version();
    pool.onProbeResult(pool.add("c"), false, T0); // 2 of 3 available: no panic, nothing published
    assertThat(pool.version()).isEqualTo(v);
    assertThat(pool.snapshot().counts().down()).isEqualTo(1);
  }

  @Test
  void aNewlyDecidedBackendInPanicMovesTheVersionBecauseItIsPublishedReady() {
    pool.onProbeResult(pool.add("a"), true, T0);
    pool.onProbeResult(pool.add("b"), false, T0);
    pool.onProbeResult(pool.add("c"), false, T0);
    assertThat(pool.panic()).isTrue();
    long v = pool.version();
    pool.onProbeResult(pool.add("d"), false, T0);
    assertThat(pool.version()).isNotEqualTo(v);
    assertThat(pool.snapshot().ready()).contains("d");
  }

  @Test
  void snapshotIsTheSameObjectWhileNothingChanged() {
    pool.onProbeResult(pool.add("a"), true, T0);
    AvailabilitySnapshot s = pool.snapshot();
    pool.onProbeResult("a", true, T0);
    assertThat(pool.snapshot()).isSameAs(s);
    pool.add("b"); // counts change, published sets do not
    AvailabilitySnapshot t = pool.snapshot();
    assertThat(t.version()).isEqualTo(s.version());
    assertThat(t.counts().total()).isEqualTo(2);
    assertThat(t.available()).isSameAs(s.available());
  }

  @Test
  void aDrainingBackendGoingDownMovesTheVersionBecauseItsServingFlagChanges() {
    Backend a = pool.add("a");
    pool.onProbeResult(a, true, T0);
    pool.onProbeResult(pool.add("b"), true, T0);
    pool.setDraining(a, true);
    long v = pool.version();
    assertThat(pool.snapshot().drainingServing()).containsExactly("a");
    for (int i = 0; i < 3; i++) {
      pool.onProbeResult(a, false, T0);
    }
    assertThat(pool.version()).isNotEqualTo(v);
    assertThat(pool.snapshot().drainingServing()).isEmpty();
  }
}
