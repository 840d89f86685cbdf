package dev.vigil.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.ActiveState;
import dev.vigil.health.ProbePhase;
import org.junit.jupiter.api.Test;

/** {@link ProbeClass#of}: docs/design.md §9's classes, first match. */
class ProbeClassTest {
  private static final long T = 1000;
  private static final long NOW = 1_000_000;

  private static ProbeClass of(ProbePhase phase, ActiveState state, PassiveTrail trail) {
    return ProbeClass.of(phase, state, false, trail, Long.MIN_VALUE, T, 3, NOW);
  }

  private static PassiveTrail successes(int n, long at) {
    PassiveTrail trail = new PassiveTrail();
    for (int i = 0; i < n; i++) {
      trail.record(true, at, 3);
    }
    return trail;
  }

  @Test
  void unknownAndMidStreakBackendsAreHot() {
    assertThat(of(ProbePhase.NORMAL, ActiveState.UNKNOWN, new PassiveTrail()))
        .isEqualTo(ProbeClass.HOT);
    assertThat(of(ProbePhase.FAST, ActiveState.UP, new PassiveTrail())).isEqualTo(ProbeClass.HOT);
    assertThat(of(ProbePhase.FAST, ActiveState.DOWN, new PassiveTrail())).isEqualTo(ProbeClass.HOT);
  }

  @Test
  void aPassiveFailureWithinTheIntervalMakesHotThenOnlyKeepsItFromQuiet() {
    PassiveTrail trail = successes(5, NOW - 100);
    trail.record(false, NOW - 500, 3);
    assertThat(of(ProbePhase.NORMAL, ActiveState.UP, trail)).isEqualTo(ProbeClass.HOT);
    PassiveTrail older = successes(5, NOW - 100);
    older.record(false, NOW - 5_000, 3);
    assertThat(of(ProbePhase.NORMAL, ActiveState.UP, older)).isEqualTo(ProbeClass.NORMAL);
  }

  @Test
  void aConfirmRequestWithinTheIntervalMakesHot() {
    assertThat(
            ProbeClass.of(
                ProbePhase.DOWN, ActiveState.DOWN, false, new PassiveTrail(), NOW - 10, T, 3, NOW))
        .isEqualTo(ProbeClass.HOT);
  }

  @Test
  void downWithoutAPassStreakIsDown() {
    assertThat(of(ProbePhase.DOWN, ActiveState.DOWN, new PassiveTrail()))
        .isEqualTo(ProbeClass.DOWN);
  }

  @Test
  void enoughRecentSuccessesAndNoFailureMakeQuiet() {
    assertThat(of(ProbePhase.NORMAL, ActiveState.UP, successes(3, NOW - 9_000)))
        .isEqualTo(ProbeClass.QUIET);
    assertThat(of(ProbePhase.NORMAL, ActiveState.UP, successes(2, NOW - 100)))
        .as("fewer than quietMinRequests")
        .isEqualTo(ProbeClass.NORMAL);
    assertThat(of(ProbePhase.NORMAL, ActiveState.UP, successes(3, NOW - 11_000)))
        .as("older than interval x 10")
        .isEqualTo(ProbeClass.NORMAL);
    assertThat(
            ProbeClass.of(
                ProbePhase.NORMAL,
                ActiveState.UP,
                true,
                successes(3, NOW - 100),
                Long.MIN_VALUE,
                T,
                3,
                NOW))
        .as("ejected")
        .isEqualTo(ProbeClass.NORMAL);
  }
}
