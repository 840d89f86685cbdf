package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The failing share's sliding window on a manual clock. */
class FailingShareTest {
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final FailingShare share = new FailingShare(Duration.ofSeconds(60), now::get);

  @Test
  void isZeroBeforeAnySampleAndWhenNothingIsProbed() {
    assertThat(share.share()).isZero();
    assertThat(share.sample(0, 0)).isZero();
    now.addAndGet(5_000);
    assertThat(share.sample(0, 0)).isZero();
  }

  @Test
  void sumsFailingOverProbedAcrossTheSamplesInTheWindow() {
    assertThat(share.sample(1, 10)).isCloseTo(0.1, within(1e-12));
    now.addAndGet(5_000);
    // (1 + 9) / (10 + 30): weighted by what was probed, not a mean of ratios (0.1 and 0.3)
    assertThat(share.sample(9, 30)).isCloseTo(0.25, within(1e-12));
    assertThat(share.share()).isCloseTo(0.25, within(1e-12));
  }

  @Test
  void forgetsSamplesOlderThanTheWindow() {
    share.sample(10, 10);
    now.addAndGet(60_000);
    assertThat(share.sample(0, 10)).as("a sample exactly 60 s old still counts").isEqualTo(0.5);
    now.addAndGet(1);
    assertThat(share.sample(0, 10)).as("the first sample is 60.001 s old").isZero();
  }

  @Test
  void aWholeMinuteOfFailuresTakesAWholeMinuteToLeave() {
    for (int i = 0; i < 12; i++) { // failing samples at 0, 5, ..., 55 s
      share.sample(10, 10);
      now.addAndGet(5_000);
    }
    assertThat(share.sample(0, 10)).as("at 60 s").isCloseTo(12.0 / 13, within(1e-12));
    for (int i = 0; i < 5; i++) { // passing samples at 65, ..., 85 s
      now.addAndGet(5_000);
      share.sample(0, 10);
    }
    // at 85 s the window holds the failing samples of 25..55 s (7) and 6 passing ones
    assertThat(share.share()).isCloseTo(7.0 / 13, within(1e-12));
    now.addAndGet(35_000);
    assertThat(share.sample(0, 10)).as("at 120 s: the last failing sample is 65 s old").isZero();
  }

  @Test
  void keepsABoundedNumberOfSamplesWhateverTheClock() {
    share.sample(FailingShare.MAX_SAMPLES, FailingShare.MAX_SAMPLES);
    for (int i = 0; i < FailingShare.MAX_SAMPLES; i++) {
      share.sample(0, 1);
    }
    assertThat(share.share()).as("the first, heavy sample was dropped").isZero();
  }

  @Test
  void refusesImpossibleCounts() {
    assertThatThrownBy(() -> share.sample(3, 2)).hasMessageContaining("failing <= probed");
    assertThatThrownBy(() -> share.sample(-1, 2)).hasMessageContaining("0 <= failing");
  }
}
