package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.budget.ProbeClass;
import dev.vigil.health.ActiveState;
import dev.vigil.health.Backend;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.Transition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code fastInterval} and {@code downInterval} end to end on the manual clock: the real decision
 * core names each backend's phase after every result, the scheduler follows it. Detection and
 * recovery times match {@code interval + (fall-1) x fastInterval} (+ timeout for hangs) within the
 * jitter, and switching phases never overlaps two probes of one backend or loses the cadence.
 */
class PhaseSchedulingTest {
  private static final int N = 300;

  /** A pool of N backends: scheduler, fake prober and the real core, wired as the runtime does. */
  private static final class Harness {
    final ManualTimers clock = new ManualTimers();
    final FakeProber prober = new FakeProber(clock);
    final PoolHealth pool;
    final ProbeScheduler<Integer> scheduler;
    final Map<Integer, Long> wentDown = new HashMap<>();
    final Map<Integer, Long> cameUp = new HashMap<>();

    Harness(HealthSettings s, long timeoutMs, long seed) {
      pool = new PoolHealth(s);
      prober.latencyMs = 2;
      ProbeSchedule schedule =
          new ProbeSchedule(
              Duration.ofMillis(s.intervalMs()),
              Duration.ofMillis(s.fastIntervalMs()),
              Duration.ofMillis(s.downIntervalMs()),
              s.jitterPercent());
      Backend[] handles = new Backend[N];
      scheduler =
          new ProbeScheduler<>(
              prober,
              clock,
              new SplittableRandom(seed),
              (key, target, result) -> {
                Backend b = handles[key];
                ActiveState before = b.state();
                Transition t = pool.onProbeResult(b, result.passed(), clock.nowMillis());
                if (t == Transition.CHANGED && before != ActiveState.UNKNOWN) {
                  (b.state() == ActiveState.DOWN ? wentDown : cameUp)
                      .putIfAbsent(key, clock.nowMillis());
                }
                scheduler().classify(key, ProbeClass.of(b.phase()));
              });
      CheckSpec spec = CheckSpec.builder().timeout(Duration.ofMillis(timeoutMs)).build();
      for (int i = 0; i < N; i++) {
        handles[i] = pool.add("b" + i);
        scheduler.add(i, ProbeSchedulerTest.target(i), spec, schedule);
      }
    }

    ProbeScheduler<Integer> scheduler() {
      return scheduler;
    }

    /** Applies {@code change} to every backend at random moments over {@code spreadMs}. */
    Map<Integer, Long> atRandomMoments(long spreadMs, long seed, Consumer<ProbeTarget> change) {
      SplittableRandom r = new SplittableRandom(seed);
      Map<Integer, Long> at = new HashMap<>();
      long step = spreadMs / N;
      for (int i = 0; i < N; i++) {
        clock.advance(r.nextLong(1, 2 * step));
        change.accept(ProbeSchedulerTest.target(i));
        at.put(i, clock.nowMillis());
      }
      return at;
    }
  }

  private static List<Long> delays(Map<Integer, Long> from, Map<Integer, Long> to) {
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      assertThat(to).as("backend %d changed state", i).containsKey(i);
      out.add(to.get(i) - from.get(i));
    }
    Collections.sort(out);
    return out;
  }

  /**
   * Detection time of a backend that starts refusing (or hanging) at a random moment: the first
   * probe after it comes within one interval, then fall-1 probes at fastInterval; a hang adds the
   * timeout of the last probe. Bounds: the waits jittered long (+ latency and 1 ms of rounding per
   * wait); the median near half an interval plus (fall-1) x fastInterval.
   */
  @ParameterizedTest(name = "interval {0} fast {1} fall {2} timeout {3} jitter {4}% {5}")
  @CsvSource({
    "10000, 1000, 3, 500, 0, refuse",
    "10000, 1000, 3, 500, 10, refuse",
    "10000, 1000, 3, 900, 10, hang",
    "5000, 5000, 3, 2000, 10, refuse",
    "2000, 500, 5, 200, 20, refuse",
    "30000, 2000, 2, 1500, 5, hang",
  })
  void detectionTakesAboutOneIntervalPlusFallMinusOneFastIntervals(
      long interval, long fast, int fall, long timeout, int jitter, String failure) {
    HealthSettings s =
        HealthSettings.builder()
            .intervalMs(interval)
            .fastIntervalMs(fast)
            .timeoutMs(timeout)
            .jitterPercent(jitter)
            .fall(fall)
            .build();
    Harness h = new Harness(s, timeout, interval + fast + fall);
    h.clock.advance(3 * interval);
    boolean hang = failure.equals("hang");
    Map<Integer, Long> killed =
        h.atRandomMoments(
            interval, fall, t -> (hang ? h.prober.hanging : h.prober.refusing).add(t));
    h.clock.advance(3 * interval + fall * fast * 2);

    List<Long> times = delays(killed, h.wentDown);
    double j = jitter / 100.0;
    long tail = hang ? timeout : h.prober.latencyMs;
    long upper = Math.round(interval * (1 + j) + (fall - 1) * fast * (1 + j)) + tail + fall;
    long lower = Math.round((fall - 1) * fast * (1 - j)) + tail - fall;
    assertThat(times.get(0)).isGreaterThanOrEqualTo(lower);
    assertThat(times.get(N - 1)).isLessThanOrEqualTo(upper);
    long median = times.get(N / 2);
    double expected = interval / 2.0 + (fall - 1) * fast + tail;
    assertThat((double) median).isBetween(expected - interval * 0.15, expected + interval * 0.15);
    assertThat(h.prober.maxConcurrentPerTarget).isEqualTo(1);
    System.out.printf(
        "detection interval %d fast %d fall %d %s: median %d ms, max %d ms (bound %d)%n",
        interval, fast, fall, failure, median, times.get(N - 1), upper);
  }

  /**
   * Recovery of a Down backend that heals at a random moment: the first probe after it comes within
   * one downInterval, then rise-1 probes at fastInterval.
   */
  @ParameterizedTest(name = "down {0} fast {1} rise {2} jitter {3}%")
  @CsvSource({"30000, 1000, 2, 10", "5000, 5000, 2, 0", "20000, 500, 4, 20"})
  void recoveryTakesAboutOneDownIntervalPlusRiseMinusOneFastIntervals(
      long down, long fast, int rise, int jitter) {
    HealthSettings s =
        HealthSettings.builder()
            .intervalMs(5_000)
            .fastIntervalMs(fast)
            .downIntervalMs(down)
            .timeoutMs(400)
            .jitterPercent(jitter)
            .rise(rise)
            .build();
    Harness h = new Harness(s, 400, down + rise);
    for (int i = 0; i < N; i++) {
      h.prober.refusing.add(ProbeSchedulerTest.target(i));
    }
    h.clock.advance(3 * down + 20_000);
    assertThat(h.pool.counts().down()).isEqualTo(N);
    Map<Integer, Long> healed = h.atRandomMoments(down, rise, h.prober.refusing::remove);
    h.clock.advance(3 * down + rise * fast * 2);

    List<Long> times = delays(healed, h.cameUp);
    double j = jitter / 100.0;
    long upper = Math.round(down * (1 + j) + (rise - 1) * fast * (1 + j)) + 2 + rise;
    assertThat(times.get(N - 1)).isLessThanOrEqualTo(upper);
    assertThat(times.get(0)).isGreaterThanOrEqualTo(Math.round((rise - 1) * fast * (1 - j)));
    double expected = down / 2.0 + (rise - 1) * fast;
    assertThat((double) times.get(N / 2)).isBetween(expected - down * 0.15, expected + down * 0.15);
  }

  @Test
  void aPhaseChangeMovesTheNextStartToTheLastStartPlusTheNewInterval() {
    ManualTimers clock = new ManualTimers();
    FakeProber prober = new FakeProber(clock);
    ProbeScheduler<Integer> s =
        new ProbeScheduler<>(prober, clock, new SplittableRandom(5), (k, t, r) -> {});
    ProbeSchedule schedule =
        new ProbeSchedule(Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(30), 0);
    s.add(
        1,
        ProbeSchedulerTest.target(1),
        CheckSpec.builder().timeout(Duration.ofMillis(500)).build(),
        schedule);
    clock.advance(25_000);
    List<Long> starts = prober.starts.get(ProbeSchedulerTest.target(1));
    long last = starts.get(starts.size() - 1);
    clock.advance(last + 100 - clock.nowMillis());
    s.classify(1, ProbeClass.HOT);
    clock.advance(3_000);
    assertThat(starts).contains(last + 1_000, last + 2_000, last + 3_000);
    s.classify(1, ProbeClass.DOWN);
    long lastFast = starts.get(starts.size() - 1);
    clock.advance(61_000);
    // a longer interval: the next start falls between the old one and the new one (spread, so
    // that backends changing class together do not start together), then the new cadence
    int firstDown = starts.indexOf(lastFast) + 1;
    assertThat(starts.get(firstDown)).isBetween(lastFast + 1_000, lastFast + 30_000);
    assertThat(starts.get(firstDown + 1) - starts.get(firstDown)).isEqualTo(30_000L);
    s.classify(1, ProbeClass.NORMAL);
    long lastDown = starts.get(starts.size() - 1);
    clock.advance(25_000);
    assertThat(starts).contains(lastDown + 10_000, lastDown + 20_000);
    long previous = starts.get(starts.size() - 1);
    clock.advance(previous + 8_000 - clock.nowMillis());
    s.classify(1, ProbeClass.HOT); // last start + 1 s has passed: start at once
    clock.advance(0);
    assertThat(starts.get(starts.size() - 1)).isEqualTo(previous + 8_000);
    clock.advance(1_000);
    assertThat(starts.get(starts.size() - 1)).isEqualTo(previous + 9_000);
    assertThat(prober.maxConcurrentPerTarget).isEqualTo(1);
  }

  @Test
  void backendsThatChangeToALongerIntervalTogetherSpreadOverIt() {
    ManualTimers clock = new ManualTimers();
    FakeProber prober = new FakeProber(clock);
    ProbeScheduler<Integer> s =
        new ProbeScheduler<>(prober, clock, new SplittableRandom(5), (k, t, r) -> {});
    ProbeSchedule schedule =
        new ProbeSchedule(
            Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(30), 10);
    int n = 1_000;
    for (int i = 0; i < n; i++) {
      s.add(
          i,
          ProbeSchedulerTest.target(i),
          CheckSpec.builder().timeout(Duration.ofMillis(500)).build(),
          schedule);
      s.classify(i, ProbeClass.HOT);
    }
    clock.advance(12_000); // the first starts spread over 10 s, then every second
    long changedAt = clock.nowMillis();
    for (int i = 0; i < n; i++) {
      s.classify(i, ProbeClass.NORMAL); // as after the same round of results
    }
    clock.advance(20_000);

    int[] perSecond = new int[20];
    for (int i = 0; i < n; i++) {
      for (long at : prober.starts.get(ProbeSchedulerTest.target(i))) {
        if (at >= changedAt && at < changedAt + 20_000) {
          perSecond[(int) ((at - changedAt) / 1_000)]++;
        }
      }
    }
    for (int second = 1; second < 20; second++) {
      assertThat(perSecond[second])
          .as("starts in second %d after the change (n / 10 a second, not n in one)", second)
          .isBetween(40, 160);
    }
  }

  /**
   * A backend that flaps at random for an hour, with timeout close to fastInterval: every gap
   * between two starts is one of the three intervals within jitter (never shorter, so never two at
   * once; never longer, so the cadence is never lost), as the phase at the previous result says.
   */
  @Test
  void switchingPhasesNeverOverlapsProbesAndNeverLosesTheCadence() {
    HealthSettings s =
        HealthSettings.builder()
            .intervalMs(5_000)
            .fastIntervalMs(1_000L)
            .downIntervalMs(15_000L)
            .timeoutMs(900)
            .jitterPercent(10)
            .build();
    Harness h = new Harness(s, 900, 77);
    SplittableRandom r = new SplittableRandom(9);
    for (long t = 0; t < 3_600_000; ) {
      long step = r.nextLong(100, 20_000);
      h.clock.advance(step);
      t += step;
      for (int i = 0; i < 20; i++) {
        ProbeTarget target = ProbeSchedulerTest.target(i);
        if (r.nextInt(3) == 0) {
          h.prober.refusing.remove(target);
          h.prober.hanging.remove(target);
          int what = r.nextInt(3);
          if (what == 1) {
            h.prober.refusing.add(target);
          } else if (what == 2) {
            h.prober.hanging.add(target);
          }
        }
      }
    }
    assertThat(h.prober.maxConcurrentPerTarget).isEqualTo(1);
    assertThat(h.scheduler.deferredStarts()).isZero();
    for (int i = 0; i < 20; i++) {
      List<Long> starts = h.prober.starts.get(ProbeSchedulerTest.target(i));
      for (int k = 1; k < starts.size(); k++) {
        assertThat(starts.get(k) - starts.get(k - 1)).isBetween(900L, 16_500L);
      }
      assertThat(starts).hasSizeGreaterThan(3_600_000 / 16_500);
    }
    assertThat(h.wentDown).isNotEmpty();
    assertThat(h.cameUp).isNotEmpty();
  }
}
