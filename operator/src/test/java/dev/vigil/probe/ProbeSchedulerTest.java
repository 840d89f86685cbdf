package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The scheduler on a manual clock: spread, jitter, no overlap, removal, leaks, detection. */
class ProbeSchedulerTest {

  static final Duration SECOND = Duration.ofSeconds(1);

  final ManualTimers timers = new ManualTimers();
  final FakeProber prober = new FakeProber(timers);
  final List<String> results = new ArrayList<>();
  ProbeScheduler<Integer> scheduler =
      new ProbeScheduler<>(
          prober,
          timers,
          new SplittableRandom(42),
          (key, target, result) -> results.add(key + ":" + result.reason()));

  static ProbeTarget target(int i) {
    return new ProbeTarget("127.1." + (i / 250) + "." + (i % 250 + 1), 8080);
  }

  static CheckSpec spec(Duration timeout) {
    return CheckSpec.builder().timeout(timeout).build();
  }

  @Test
  void spreadsFirstProbesEvenlyOverTheInterval() {
    int n = 5_000;
    for (int i = 0; i < n; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(500)), new ProbeSchedule(SECOND, 10));
    }
    timers.advance(999);

    int[] per100ms = new int[10];
    for (int i = 0; i < n; i++) {
      List<Long> s = prober.starts.get(target(i));
      assertThat(s).as("backend %d probed in the first interval", i).isNotEmpty();
      assertThat(s.get(0)).isBetween(0L, 999L);
      per100ms[(int) (s.get(0) / 100)]++;
    }
    for (int count : per100ms) {
      assertThat(count).as("about n/10 first probes per 100 ms").isBetween(400, 600);
    }
  }

  @Test
  void eachProbeStartsIntervalPlusOrMinusJitterAfterThePreviousStart() {
    // 200 backends: starts are taken early to share wake-ups, and gaps still keep to the band
    for (int i = 0; i < 200; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    }
    timers.advance(20_000);

    List<Long> gaps = new ArrayList<>();
    for (int b = 0; b < 200; b++) {
      List<Long> starts = prober.starts.get(target(b));
      for (int i = 1; i < starts.size(); i++) {
        gaps.add(starts.get(i) - starts.get(i - 1));
      }
    }
    assertThat(gaps)
        .hasSizeGreaterThan(3_500)
        .allSatisfy(g -> assertThat(g).isBetween(900L, 1100L));
    assertThat(Collections.min(gaps)).as("jitter reaches its lower bound").isLessThan(910L);
    assertThat(Collections.max(gaps)).as("jitter reaches its upper bound").isGreaterThan(1090L);
    double mean = gaps.stream().mapToLong(Long::longValue).average().orElseThrow();
    assertThat(mean).as("no drift: the mean gap is the interval").isBetween(990.0, 1010.0);
  }

  @Test
  void startsDueWithinAQuarterOfTheJitterShareOneWakeUp() {
    int n = 1_000;
    for (int i = 0; i < n; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    }
    timers.advance(10_000);

    java.util.Set<Long> moments = new java.util.HashSet<>();
    int starts = 0;
    for (int i = 0; i < n; i++) {
      moments.addAll(prober.starts.get(target(i)));
      starts += prober.starts.get(target(i)).size();
    }
    assertThat(starts).as("no start lost").isBetween(9_900, 10_100);
    // the timer takes everything due within 25 ms (a quarter of 10 % of 1 s): at most one
    // wake-up per 25 ms, where one per start would make thousands of distinct moments
    assertThat(moments).hasSizeLessThanOrEqualTo(10_000 / 25 + 1);
  }

  @Test
  void withoutJitterNoStartIsTakenEarly() {
    int n = 1_000;
    for (int i = 0; i < n; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 0));
    }
    timers.advance(10_000);

    for (int i = 0; i < n; i++) {
      List<Long> s = prober.starts.get(target(i));
      for (int k = 1; k < s.size(); k++) {
        assertThat(s.get(k) - s.get(k - 1)).as("backend %d", i).isEqualTo(1_000L);
      }
    }
  }

  @Test
  void withoutJitterTheCadenceIsExact() {
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 0));
    timers.advance(60_000);
    List<Long> starts = prober.starts.get(target(1));
    // The first start falls in [0, interval), then one per second up to 60 000 ms: 60 or 61.
    assertThat(starts).hasSizeBetween(60, 61);
    assertThat(starts.get(0)).isBetween(0L, 999L);
    for (int i = 1; i < starts.size(); i++) {
      assertThat(starts.get(i) - starts.get(i - 1)).isEqualTo(1000L);
    }
  }

  @Test
  void neverRunsTwoProbesOfOneBackendAtOnce() {
    prober.hanging.add(target(1));
    prober.lateBy = 300; // a prober that overruns its own deadline
    scheduler.add(1, target(1), spec(Duration.ofMillis(900)), new ProbeSchedule(SECOND, 50));
    timers.advance(600_000);

    assertThat(prober.maxConcurrentPerTarget).isEqualTo(1);
    assertThat(scheduler.deferredStarts()).isPositive();
    // Each probe lasts deadline + overrun = 1 200 ms and the next start waits for it: a start every
    // 1 200 ms unless the jittered plan (500 to 1 500 ms after the last planned start) is later
    // still, so 600 s hold at most 500 starts and, with the plan's mean of 1 000 ms mostly
    // behind, not many fewer.
    List<Long> starts = prober.starts.get(target(1));
    for (int i = 1; i < starts.size(); i++) {
      assertThat(starts.get(i) - starts.get(i - 1))
          .as("gap before start %d", i)
          .isBetween(1200L, 1500L);
    }
    assertThat(starts).hasSizeBetween(460, 501);
  }

  @Test
  void aHangingBackendWithTimeoutEqualToIntervalKeepsItsCadence() {
    prober.hanging.add(target(1));
    scheduler.add(1, target(1), spec(SECOND), new ProbeSchedule(SECOND, 10));
    timers.advance(600_000);
    List<Long> starts = prober.starts.get(target(1));
    for (int i = 1; i < starts.size(); i++) {
      // a start due while the previous probe runs waits for its deadline, never longer
      assertThat(starts.get(i) - starts.get(i - 1)).isBetween(1000L, 1100L);
    }
    assertThat(prober.maxConcurrentPerTarget).isEqualTo(1);
    assertThat(scheduler.deferredStarts()).isPositive();
    assertThat(starts).hasSizeGreaterThan(570);
  }

  @Test
  void aHealthyBackendKeepsTheFullJitterEvenWithTimeoutEqualToInterval() {
    scheduler.add(1, target(1), spec(SECOND), new ProbeSchedule(SECOND, 10));
    timers.advance(600_000);
    List<Long> starts = prober.starts.get(target(1));
    List<Long> gaps = new ArrayList<>();
    for (int i = 1; i < starts.size(); i++) {
      gaps.add(starts.get(i) - starts.get(i - 1));
    }
    // planned waits reach 925 ms: the 900-1100 band narrowed by the 25 ms a start may be taken
    // early on either side (alone, this backend is never taken early)
    assertThat(Collections.min(gaps)).isBetween(925L, 935L);
    assertThat(scheduler.deferredStarts()).isZero();
  }

  @Test
  void deliversEveryResultToTheListener() {
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    prober.hanging.add(target(2));
    scheduler.add(2, target(2), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    timers.advance(10_500);
    assertThat(results).contains("1:OK", "2:TIMEOUT");
    assertThat(results).hasSizeBetween(18, 22);
  }

  @Test
  void removeStopsProbingAndDropsTheResultInFlight() {
    prober.hanging.add(target(1));
    scheduler.add(1, target(1), spec(Duration.ofMillis(800)), new ProbeSchedule(SECOND, 10));
    timers.advance(5_000);
    // a probe is in flight for 800 ms of each second: remove in the middle of one
    while (prober.inFlight.getOrDefault(target(1), 0) == 0) {
      timers.advance(10);
    }
    int startsAtRemoval = prober.starts.get(target(1)).size();
    int resultsAtRemoval = results.size();
    scheduler.remove(1);
    timers.advance(60_000);

    assertThat(prober.starts.get(target(1))).hasSize(startsAtRemoval);
    assertThat(results).as("the result in flight is dropped").hasSize(resultsAtRemoval);
    assertThat(prober.forgotten).containsExactly(target(1));
    assertThat(timers.pending()).isZero();
    assertThat(scheduler.size()).isZero();
  }

  @Test
  void noProbeAfterRemove() {
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    timers.advance(5_000);
    scheduler.remove(1);
    int starts = prober.starts.get(target(1)).size();
    timers.advance(60_000);
    assertThat(prober.starts.get(target(1))).hasSize(starts);
  }

  @Test
  void noTimerLeakAfterTenThousandAddRemoveCycles() {
    SplittableRandom r = new SplittableRandom(7);
    for (int cycle = 0; cycle < 10_000; cycle++) {
      int key = cycle % 100;
      scheduler.add(key, target(key), spec(Duration.ofMillis(300)), new ProbeSchedule(SECOND, 10));
      timers.advance(r.nextInt(0, 30));
      if (r.nextBoolean()) {
        scheduler.update(
            key,
            target(key),
            spec(Duration.ofMillis(300)),
            new ProbeSchedule(SECOND.plusMillis(r.nextInt(1, 500)), 20));
      }
      scheduler.remove(key);
    }
    assertThat(scheduler.size()).isZero();
    assertThat(timers.pending()).as("only fake probes still in flight").isLessThanOrEqualTo(100);
    timers.advance(1_000);
    assertThat(timers.pending()).isZero();
  }

  @Test
  void noTimerLeakOnARealEventLoop() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      VertxTimers real = new VertxTimers(vertx.getOrCreateContext());
      AtomicInteger probes = new AtomicInteger();
      Prober instant =
          (target, spec) -> {
            probes.incrementAndGet();
            return Future.succeededFuture(ProbeResult.pass("ok", 0));
          };
      ProbeScheduler<Integer> s =
          new ProbeScheduler<>(instant, real, new SplittableRandom(1), (k, t, res) -> {});
      for (int cycle = 0; cycle < 10_000; cycle++) {
        int key = cycle % 50;
        s.add(
            key,
            target(key),
            spec(Duration.ofMillis(50)),
            new ProbeSchedule(Duration.ofMillis(100), 10));
        s.remove(key);
      }
      CountDownLatch settled = new CountDownLatch(1);
      real.execute(settled::countDown);
      assertThat(settled.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(s.size()).isZero();
      assertThat(real.pending()).isZero();
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void stopCancelsEverything() {
    for (int i = 0; i < 100; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    }
    timers.advance(3_000);
    scheduler.stop();
    int after = results.size();
    timers.advance(10_000);
    assertThat(results).hasSize(after);
    assertThat(timers.pending()).isZero();
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    assertThat(scheduler.size()).isZero();
  }

  @Test
  void updateChangesTheCadenceFromTheLastStart() {
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 0));
    timers.advance(10_000);
    long last = lastStart(1);
    long updatedAt = timers.nowMillis();
    scheduler.update(
        1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(Duration.ofMillis(250), 0));
    timers.advance(5_000);
    List<Long> starts = prober.starts.get(target(1));
    int i = starts.indexOf(last);
    // 250 ms after the last start, or at once if that moment has already passed
    assertThat(starts.get(i + 1)).isEqualTo(Math.max(last + 250, updatedAt));
    assertThat(starts.get(starts.size() - 1) - starts.get(starts.size() - 2)).isEqualTo(250L);
  }

  @Test
  void updateToANewAddressForgetsTheOldOne() {
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 0));
    timers.advance(3_000);
    scheduler.update(1, target(2), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 0));
    timers.advance(3_000);
    assertThat(prober.forgotten).containsExactly(target(1));
    assertThat(prober.starts.get(target(2))).hasSize(3);
  }

  @Test
  void aGrownStretchSpreadsTheNextStartsOverTheNewInterval() {
    int n = 1_000;
    for (int i = 0; i < n; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    }
    timers.advance(2_000);
    long stretchedAt = timers.nowMillis();
    scheduler.stretch(new dev.vigil.budget.ProbeStretch(1, 1, 1, 10));
    timers.advance(30_000);

    // every backend's phase was within one second: kept, all would start in one second of ten
    int[] perSecond = new int[30];
    List<Long> gaps = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<Long> s = prober.starts.get(target(i));
      for (int k = 0; k < s.size(); k++) {
        long at = s.get(k) - stretchedAt;
        if (at >= 0 && at < 30_000) {
          perSecond[(int) (at / 1_000)]++;
        }
        if (k > 0 && s.get(k - 1) >= stretchedAt) {
          gaps.add(s.get(k) - s.get(k - 1));
        }
      }
    }
    for (int second = 0; second < 30; second++) {
      assertThat(perSecond[second])
          .as("starts in second %d after the stretch (n / 10 a second)", second)
          .isBetween(40, 160);
    }
    for (int from = 0; from + 10 <= 30; from++) {
      int window = 0;
      for (int second = from; second < from + 10; second++) {
        window += perSecond[second];
      }
      assertThat(window).as("starts in the 10 s from second %d (n)", from).isBetween(900, 1_100);
    }
    assertThat(gaps).isNotEmpty().allSatisfy(g -> assertThat(g).isBetween(9_000L, 11_000L));
  }

  @Test
  void aStretchThatFallsRightAfterTheFirstStartsKeepsThemSpread() {
    // the budget's first plan sees only undecided (hot) backends and stretches normal, which has
    // none yet, to maxInterval; the next plan, a second later, brings it back to tenfold
    int n = 1_000;
    for (int i = 0; i < n; i++) {
      scheduler.add(i, target(i), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 10));
    }
    scheduler.stretch(new dev.vigil.budget.ProbeStretch(10, 60, 60, 60));
    timers.advance(1_500);
    scheduler.stretch(new dev.vigil.budget.ProbeStretch(10, 10, 10, 10));
    timers.advance(58_500);

    int[] perFive = new int[12];
    for (int i = 0; i < n; i++) {
      for (long at : prober.starts.get(target(i))) {
        if (at < 60_000) {
          perFive[(int) (at / 5_000)]++;
        }
      }
    }
    for (int k = 4; k < 12; k++) {
      assertThat(perFive[k])
          .as("starts in [%d s, %d s): half of the backends every 5 s", k * 5, k * 5 + 5)
          .isBetween(400, 600);
    }
  }

  @Test
  void aFallenStretchBringsFarStartsForward() {
    scheduler.add(1, target(1), spec(Duration.ofMillis(200)), new ProbeSchedule(SECOND, 0));
    scheduler.stretch(new dev.vigil.budget.ProbeStretch(1, 1, 1, 30));
    timers.advance(40_000);
    long last = lastStart(1);
    timers.advance(2_000);
    long shrunkAt = timers.nowMillis();
    scheduler.stretch(dev.vigil.budget.ProbeStretch.NONE);
    timers.advance(3_000);

    List<Long> starts = prober.starts.get(target(1));
    int i = starts.indexOf(last);
    assertThat(shrunkAt - last).as("the new interval had passed").isGreaterThan(1_000L);
    assertThat(starts.get(i + 1))
        .as("within the new interval (spread), not 30 s after the last start")
        .isBetween(shrunkAt, shrunkAt + 1_000);
    assertThat(starts.get(i + 2) - starts.get(i + 1)).isEqualTo(1_000L);
  }

  @Test
  void rejectsATimeoutAboveTheInterval() {
    assertThatThrownBy(
            () ->
                scheduler.add(
                    1, target(1), spec(Duration.ofSeconds(2)), new ProbeSchedule(SECOND, 10)))
        .hasMessageStartingWith("active.timeout:");
  }

  /**
   * fall 3, interval 1 s, timeout 1 s: a backend that starts hanging at a random moment is detected
   * (third timeout in a row) within 3 waits + 1 timeout: at most 4.03 s without jitter (the 10 ms
   * margin), at most 4.33 s with 10 % jitter (three long waits in a row), about 3.5 s median.
   * HAProxy needs 5.5-6 s on the same settings.
   */
  @Test
  void detectsAHangingBackendWithinAboutFourSeconds() {
    assertThat(detectionTimes(0)).allSatisfy(t -> assertThat(t).isLessThanOrEqualTo(4_030L));
    List<Long> jittered = detectionTimes(10);
    assertThat(jittered).allSatisfy(t -> assertThat(t).isLessThanOrEqualTo(4_330L));
    Collections.sort(jittered);
    long median = jittered.get(jittered.size() / 2);
    System.out.printf(
        "hang detection, fall 3, interval 1 s, timeout 1 s, jitter 10%%: median %d ms, max %d ms%n",
        median, jittered.get(jittered.size() - 1));
    assertThat(median).as("median").isBetween(3_300L, 3_800L);
  }

  private List<Long> detectionTimes(int jitter) {
    ManualTimers clock = new ManualTimers();
    FakeProber fake = new FakeProber(clock);
    fake.latencyMs = 2;
    int n = 1_000;
    Map<Integer, Integer> failRun = new HashMap<>();
    Map<Integer, Long> detectedAt = new HashMap<>();
    ProbeScheduler<Integer> s =
        new ProbeScheduler<>(
            fake,
            clock,
            new SplittableRandom(jitter + 11),
            (key, target, result) -> {
              int run = result.passed() ? 0 : failRun.getOrDefault(key, 0) + 1;
              failRun.put(key, run);
              if (run == 3) {
                detectedAt.putIfAbsent(key, clock.nowMillis());
              }
            });
    for (int i = 0; i < n; i++) {
      s.add(i, target(i), spec(SECOND), new ProbeSchedule(SECOND, jitter));
    }
    clock.advance(10_000);
    // hangs start at random moments over one interval
    SplittableRandom r = new SplittableRandom(3);
    Map<Integer, Long> hungAt = new HashMap<>();
    long t = 0;
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      order.add(i);
    }
    for (int i : order) {
      long step = r.nextLong(0, 2);
      clock.advance(step);
      t += step;
      fake.hanging.add(target(i));
      hungAt.put(i, clock.nowMillis());
    }
    clock.advance(10_000);
    List<Long> times = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      assertThat(detectedAt).containsKey(i);
      times.add(detectedAt.get(i) - hungAt.get(i));
    }
    assertThat(t).isPositive();
    return times;
  }

  private long lastStart(int i) {
    List<Long> s = prober.starts.get(target(i));
    return s.get(s.size() - 1);
  }
}
