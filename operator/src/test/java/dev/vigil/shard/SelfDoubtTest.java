package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/design.md §8 self-doubt: f >= 0.30 and f >= 3 x the peers' median, never alone. */
class SelfDoubtTest {
  @Test
  void suspectAtThirtyPercentAndThreeTimesThePeersMedian() {
    assertThat(SelfDoubt.suspect(0.30, List.of(0.10, 0.05, 0.20))).isTrue();
    assertThat(SelfDoubt.suspect(0.29, List.of(0.0, 0.0))).as("under 30 %").isFalse();
    assertThat(SelfDoubt.suspect(0.50, List.of(0.20, 0.10, 0.30)))
        .as("0.5 < 3 x 0.2: the whole cluster fails, not this checker")
        .isFalse();
    assertThat(SelfDoubt.suspect(0.75, List.of(0.25, 0.125, 0.5))).as("exactly 3x").isTrue();
    assertThat(SelfDoubt.suspect(0.74, List.of(0.25, 0.125, 0.5))).as("under 3x").isFalse();
    assertThat(SelfDoubt.suspect(1.0, List.of())).as("no peer: never").isFalse();
  }

  @Test
  void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
    assertThat(SelfDoubt.median(List.of(0.5, 0.125, 0.25, 0.0))).isEqualTo(0.1875);
    assertThat(SelfDoubt.suspect(0.5625, List.of(0.5, 0.125, 0.25, 0.0))).as("3 x 0.1875").isTrue();
    assertThat(SelfDoubt.suspect(0.56, List.of(0.5, 0.125, 0.25, 0.0))).isFalse();
  }
}
