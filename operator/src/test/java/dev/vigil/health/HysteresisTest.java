package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HysteresisTest {
  private final PoolHealth pool = new PoolHealth(HealthSettings.defaults()); // rise 2, fall 3
  private long now = 1_000;

  private void probe(Backend b, String results) {
    for (char c : results.toCharArray()) {
      pool.onProbeResult(b, c == 'P', now += 5_000);
    }
  }

  private Backend upBackend() {
    Backend b = pool.add("a");
    probe(b, "P");
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    return b;
  }

  private Backend downBackend() {
    Backend b = pool.add("a");
    probe(b, "F");
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
    return b;
  }

  @Test
  void staysUpWhenFailuresAreNotConsecutive() {
    Backend b = upBackend();
    probe(b, "FFPFF");
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    assertThat(pool.snapshot().available()).containsExactly("a");
  }

  @Test
  void goesDownAfterFallFailuresInARow() {
    Backend b = upBackend();
    probe(b, "FF");
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    probe(b, "F");
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
    assertThat(pool.snapshot().available()).isEmpty();
  }

  @Test
  void staysDownWhenPassesAreNotConsecutive() {
    Backend b = downBackend();
    probe(b, "PFP");
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
  }

  @Test
  void comesUpAfterRisePassesInARow() {
    Backend b = downBackend();
    probe(b, "PP");
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    assertThat(pool.snapshot().available()).containsExactly("a");
  }

  @Test
  void strictlyAlternatingResultsNeverFlipAnUpBackend() {
    Backend b = upBackend();
    for (int i = 0; i < 100; i++) {
      probe(b, i % 2 == 0 ? "F" : "P");
      assertThat(b.state()).isEqualTo(ActiveState.UP);
    }
  }

  @Test
  void strictlyAlternatingResultsNeverFlipADownBackend() {
    Backend b = downBackend();
    for (int i = 0; i < 100; i++) {
      probe(b, i % 2 == 0 ? "P" : "F");
      assertThat(b.state()).isEqualTo(ActiveState.DOWN);
    }
  }

  @Test
  void newBackendIsUnknownAndNotAvailable() {
    Backend b = pool.add("a");
    assertThat(b.state()).isEqualTo(ActiveState.UNKNOWN);
    assertThat(b.available()).isFalse();
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.available()).isEmpty();
    assertThat(s.counts().unknown()).isEqualTo(1);
  }

  @Test
  void firstPassDecidesUp() {
    Backend b = pool.add("a");
    assertThat(pool.onProbeResult(b, true, now)).isEqualTo(Transition.CHANGED);
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    assertThat(pool.snapshot().available()).containsExactly("a");
  }

  @Test
  void firstFailDecidesDown() {
    Backend b = pool.add("a");
    assertThat(pool.onProbeResult(b, false, now)).isEqualTo(Transition.CHANGED);
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
  }

  @Test
  void reportsPendingWhileARunIsIncompleteAndChangedWhenItFlips() {
    Backend b = upBackend();
    assertThat(pool.onProbeResult(b, true, now)).isEqualTo(Transition.UNCHANGED);
    assertThat(pool.onProbeResult(b, false, now)).isEqualTo(Transition.PENDING);
    assertThat(pool.onProbeResult(b, false, now)).isEqualTo(Transition.PENDING);
    assertThat(pool.onProbeResult(b, false, now)).isEqualTo(Transition.CHANGED);
    assertThat(pool.onProbeResult(b, false, now)).isEqualTo(Transition.UNCHANGED);
    assertThat(pool.onProbeResult(b, true, now)).isEqualTo(Transition.PENDING);
    assertThat(pool.onProbeResult(b, true, now)).isEqualTo(Transition.CHANGED);
  }

  @Test
  void countsPassAndFailRuns() {
    Backend b = upBackend();
    probe(b, "PP");
    assertThat(b.passRun()).isEqualTo(3);
    assertThat(b.failRun()).isZero();
    probe(b, "FF");
    assertThat(b.passRun()).isZero();
    assertThat(b.failRun()).isEqualTo(2);
  }

  @Test
  void appliedThresholdsTakeEffectLiveAndKeepState() {
    Backend b = upBackend();
    probe(b, "F");
    pool.apply(HealthSettings.builder().fall(2).build());
    assertThat(b.state()).isEqualTo(ActiveState.UP);
    assertThat(b.failRun()).isEqualTo(1);
    probe(b, "F");
    assertThat(b.state()).isEqualTo(ActiveState.DOWN);
  }
}
