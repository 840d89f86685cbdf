package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The backlog (unanswered probes started within the window) and the scheduler holding starts when
 * it is full: an overloaded loop slows down instead of timing out, hanging backends do not hold it.
 */
class BacklogTest {

  @Test
  void countsUnansweredStartsWithinTheWindowOnly() {
    Backlog backlog = new Backlog(100, 10);
    backlog.started(1_000);
    backlog.started(1_005);
    backlog.started(1_050);
    assertThat(backlog.size(1_050)).isEqualTo(3);

    backlog.answered(1_005, 1_060);
    assertThat(backlog.size(1_060)).isEqualTo(2);

    // the start at 1 000 leaves the window at 1 100, the one at 1 050 at 1 150
    assertThat(backlog.nextExpiry(1_060)).isEqualTo(1_070);
    assertThat(backlog.size(1_099)).isEqualTo(2);
    assertThat(backlog.size(1_100)).isEqualTo(1);
    assertThat(backlog.size(1_150)).isZero();

    // an answer after its start left the window changes nothing, and never goes below zero
    backlog.answered(1_000, 1_200);
    backlog.answered(1_050, 1_200);
    assertThat(backlog.size(1_200)).isZero();
    backlog.started(1_200);
    assertThat(backlog.size(1_200)).isEqualTo(1);
  }

  @Test
  void aLongPauseClearsTheWholeRing() {
    Backlog backlog = new Backlog(100, 10);
    for (int i = 0; i < 50; i++) {
      backlog.started(i);
    }
    assertThat(backlog.size(99)).isEqualTo(50);
    assertThat(backlog.size(10_000)).isZero();
    backlog.started(10_000);
    backlog.answered(10_000, 10_001);
    assertThat(backlog.size(10_001)).isZero();
  }

  @Test
  void rejectsAWindowShorterThanItsBuckets() {
    assertThatThrownBy(() -> new Backlog(5, 10)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backlog(100, 0)).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * A loop too slow for its pool: every probe takes 150 ms (longer than the window) and 1,000
   * backends want 10,000 starts a second. Starts beyond the backlog wait instead of piling up:
   * never more than the limit unanswered within the window, every backend still probed in turn,
   * never two probes of one backend at once.
   */
  @Test
  void anOverloadedLoopHoldsStartsInsteadOfPilingThemUp() {
    ManualTimers timers = new ManualTimers();
    FakeProber prober = new FakeProber(timers);
    prober.latencyMs = 150;
    int limit = 64;
    ProbeScheduler<Integer> scheduler =
        new ProbeScheduler<>(prober, timers, new SplittableRandom(7), (k, t, r) -> {}, limit);
    Duration interval = Duration.ofMillis(100);
    for (int i = 0; i < 1_000; i++) {
      scheduler.add(
          i,
          ProbeSchedulerTest.target(i),
          CheckSpec.builder().timeout(interval).build(),
          new ProbeSchedule(interval, 10));
    }
    timers.advance(30_000);

    List<Long> all = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      List<Long> starts = prober.starts.get(ProbeSchedulerTest.target(i));
      assertThat(starts).as("backend %d keeps being probed", i).hasSizeGreaterThan(5);
      all.addAll(starts);
    }
    // every probe is unanswered for its first 150 ms, so all starts within the window's ten 10 ms
    // buckets count at once
    int[] perBucket = new int[30_000 / 10 + 1];
    all.forEach(t -> perBucket[(int) (t / 10)]++);
    for (int b = 0; b + 10 <= perBucket.length; b++) {
      int inWindow = 0;
      for (int k = b; k < b + 10; k++) {
        inWindow += perBucket[k];
      }
      assertThat(inWindow)
          .as("starts from %d ms to %d ms", b * 10, b * 10 + 100)
          .isLessThanOrEqualTo(limit);
    }
    // the loop's capacity here: the limit per window, about 640 starts a second
    assertThat(all.size()).isBetween(30 * 500, 30 * 640 + limit);
    assertThat(scheduler.heldStarts()).isPositive();
    assertThat(prober.maxConcurrentPerTarget).isEqualTo(1);
  }

  /** With room in the backlog, nothing waits: the default limit is not reached by this pool. */
  @Test
  void hangingBackendsHoldAPlaceForTheWindowNotForTheirWholeTimeout() {
    ManualTimers timers = new ManualTimers();
    FakeProber prober = new FakeProber(timers);
    int limit = 100;
    ProbeScheduler<Integer> scheduler =
        new ProbeScheduler<>(prober, timers, new SplittableRandom(7), (k, t, r) -> {}, limit);
    Duration second = Duration.ofSeconds(1);
    // 500 hanging backends keep 500 probes in flight for their 1 s timeout, about 50 of them
    // started within the last 100 ms; 500 healthy ones answer in 5 ms
    for (int i = 0; i < 1_000; i++) {
      if (i % 2 == 0) {
        prober.hanging.add(ProbeSchedulerTest.target(i));
      }
      scheduler.add(
          i,
          ProbeSchedulerTest.target(i),
          CheckSpec.builder().timeout(second).build(),
          new ProbeSchedule(second, 10));
    }
    timers.advance(60_000);

    assertThat(scheduler.heldStarts()).isZero();
    for (int i = 1; i < 1_000; i += 2) {
      List<Long> starts = prober.starts.get(ProbeSchedulerTest.target(i));
      for (int s = 1; s < starts.size(); s++) {
        assertThat(starts.get(s) - starts.get(s - 1)).isBetween(900L, 1100L);
      }
    }
  }
}
