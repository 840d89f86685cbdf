package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** One namespace's cap: a burst, then one run a gap, others untouched, refunds, bounded memory. */
class NamespacePaceTest {
  private final NamespacePace pace = NamespacePace.perSecond(10); // a gap of 100 ms, burst 20

  @Test
  void aBurstStartsAtOnceThenOneRunAGap() {
    for (int i = 0; i < 20; i++) {
      assertThat(pace.reserve("a", 0, 0)).as("run %d of the burst", i).isZero();
    }
    assertThat(pace.reserve("a", 0, 0)).isEqualTo(100);
    assertThat(pace.reserve("a", 0, 0)).isEqualTo(200);
    assertThat(pace.reserve("a", 50, 50)).as("asked later, still in line").isEqualTo(300);
  }

  @Test
  void oneNamespaceOverItsCapDoesNotDelayAnother() {
    for (int i = 0; i < 100; i++) {
      pace.reserve("a", 0, 0);
    }
    assertThat(pace.reserve("b", 0, 0)).isZero();
    assertThat(pace.reserve("b", 7, 0)).as("an earliest start of its own is kept").isEqualTo(7);
  }

  @Test
  void theRateOverALongRunIsTheCap() {
    long last = 0;
    for (int i = 0; i < 1_020; i++) {
      last = pace.reserve("a", 0, 0);
    }
    // 20 at once, then 1,000 more one gap apart
    assertThat(last).isEqualTo(100_000);
  }

  @Test
  void aRunThatWroteNothingGivesItsStartBack() {
    for (int i = 0; i < 20; i++) {
      pace.reserve("a", 0, 0);
    }
    pace.refund("a", 0);
    assertThat(pace.reserve("a", 0, 0)).isZero();
    assertThat(pace.reserve("a", 0, 0)).isEqualTo(100);
  }

  @Test
  void aQuietSpellRefillsTheBurst() {
    for (int i = 0; i < 40; i++) {
      pace.reserve("a", 0, 0);
    }
    for (int i = 0; i < 20; i++) {
      assertThat(pace.reserve("a", 10_000, 10_000)).isEqualTo(10_000);
    }
    assertThat(pace.reserve("a", 10_000, 10_000)).isEqualTo(10_100);
  }

  @Test
  void noCapStartsEveryRunWhenAsked() {
    NamespacePace none = NamespacePace.perSecond(0);
    assertThat(none.caps()).isFalse();
    for (int i = 0; i < 1_000; i++) {
      assertThat(none.reserve("a", i % 7, 0)).isEqualTo(i % 7);
    }
    assertThat(none.size()).isZero();
  }

  @Test
  void namespacesWhoseLineIsFreeAreForgotten() {
    for (int i = 0; i < 2_000; i++) {
      pace.reserve("ns-" + i, 0, 0);
    }
    assertThat(pace.size()).isEqualTo(2_000);
    for (int i = 0; i < 3_000; i++) {
      pace.reserve("late-" + i, 1_000, 1_000);
    }
    assertThat(pace.size()).as("the 2,000 lines free since 100 ms dropped").isEqualTo(3_000);
  }
}
