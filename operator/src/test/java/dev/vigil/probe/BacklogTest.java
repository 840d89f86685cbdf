package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The backlog (unanswered probes started within the window) and the scheduler holding starts when
 * it is full: an overloaded loop slows down instead of timing out, hanging backends do not hold it.
 */
class BacklogTest {

  @Test
  void countsUnansweredStartsWithinTheWindowOnly() {
    Backlog backlog = new Backlog(100, 10, 1_000);
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
    Backlog backlog = new Backlog(100, 10, 1_000);
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
    assertThatThrownBy(() -> new Backlog(5, 10, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backlog(100, 0, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backlog(100, 10, 0)).isInstanceOf(IllegalArgumentException.class);
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
    ProbeScheduler<Integer> scheduler = scheduler(timers, prober, 7, backlog(limit));
    Duration interval = Duration.ofMillis(100);
    for (int i = 0; i < 1_000; i++) {
      add(scheduler, i, interval);
    }
    timers.advance(30_000);

    List<Long> all = startsOfTheFirst(1_000, prober);
    // every probe is unanswered for its first 150 ms, so all starts within the window's ten 10 ms
    // buckets count at once
    assertAtMostPerWindow(all, limit);
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
    ProbeScheduler<Integer> scheduler = scheduler(timers, prober, 7, backlog(100));
    Duration second = Duration.ofSeconds(1);
    // 500 hanging backends keep 500 probes in flight for their 1 s timeout, about 50 of them
    // started within the last 100 ms; 500 healthy ones answer in 5 ms
    for (int i = 0; i < 1_000; i++) {
      if (i % 2 == 0) {
        prober.hanging.add(ProbeSchedulerTest.target(i));
      }
      add(scheduler, i, second);
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

  /**
   * A hundred pools of ten on one loop share its backlog: together they are held back as one pool
   * of a thousand is, and every backend of every pool still gets its turn.
   */
  @Test
  void everySchedulerOnALoopSharesItsBacklog() {
    ManualTimers timers = new ManualTimers();
    FakeProber prober = new FakeProber(timers);
    prober.latencyMs = 150;
    int limit = 64;
    Backlog shared = backlog(limit);
    Duration interval = Duration.ofMillis(100);
    List<ProbeScheduler<Integer>> pools = new ArrayList<>();
    for (int p = 0; p < 100; p++) {
      ProbeScheduler<Integer> pool = scheduler(timers, prober, p, shared);
      for (int i = p * 10; i < p * 10 + 10; i++) {
        add(pool, i, interval);
      }
      pools.add(pool);
    }
    timers.advance(30_000);

    assertAtMostPerWindow(startsOfTheFirst(1_000, prober), limit);
    assertThat(pools).allSatisfy(p -> assertThat(p.heldStarts()).isPositive());
    assertThat(prober.maxConcurrentPerTarget).isEqualTo(1);
  }

  /**
   * Issue 31: one tenant's pool of 5,000 backends keeps thousands of starts held on an overloaded
   * loop; a small pool on the same loop must not wait behind that line. Held starts are served
   * round robin between pools, so each of the small pool's starts waits for at most one of the huge
   * pool's, and its backends keep their interval (1 s, jitter 10 %) within one backlog window. In
   * one line (first come, first served) they waited seconds behind the huge pool's starts.
   */
  @Test
  void aHugePoolsHeldStartsDoNotDelayASmallPoolsTurn() {
    ManualTimers timers = new ManualTimers();
    FakeProber prober = new FakeProber(timers);
    prober.latencyMs = 150;
    Backlog shared = backlog(64);
    Duration interval = Duration.ofSeconds(1);
    ProbeScheduler<Integer> huge = scheduler(timers, prober, 1, shared);
    for (int i = 0; i < 5_000; i++) {
      add(huge, i, interval);
    }
    ProbeScheduler<Integer> small = scheduler(timers, prober, 2, shared);
    for (int i = 10_000; i < 10_010; i++) {
      add(small, i, interval);
    }
    timers.advance(30_000);

    assertThat(huge.heldStarts()).as("the huge pool overloads the loop").isGreaterThan(10_000);
    for (int i = 10_000; i < 10_010; i++) {
      List<Long> starts = prober.starts.get(ProbeSchedulerTest.target(i));
      assertThat(starts).as("small backend %d", i).hasSizeGreaterThan(25);
      for (int s = 5; s < starts.size(); s++) {
        assertThat(starts.get(s) - starts.get(s - 1))
            .as("small backend %d, start %d", i, s)
            .isLessThanOrEqualTo(1_100L + ProbeScheduler.BACKLOG_WINDOW_MS + 50);
      }
    }
  }

  /** Vert.x contexts on one event loop get one backlog; another loop has its own. */
  @Test
  void vertxTimersShareTheBacklogOfTheirEventLoop() throws Exception {
    io.vertx.core.Vertx vertx =
        io.vertx.core.Vertx.vertx(new io.vertx.core.VertxOptions().setEventLoopPoolSize(2));
    try {
      var internal = (io.vertx.core.internal.VertxInternal) vertx;
      var first = internal.createEventLoopContext();
      var sameLoop = internal.contextBuilder().withEventLoop(first.nettyEventLoop()).build();
      io.netty.channel.EventLoop other = null;
      for (var e : internal.nettyEventLoopGroup()) {
        if (e != first.nettyEventLoop()) {
          other = (io.netty.channel.EventLoop) e;
        }
      }
      var otherLoop = internal.contextBuilder().withEventLoop(other).build();

      Backlog backlog = new VertxTimers(first).backlog();
      assertThat(new VertxTimers(first).backlog()).isSameAs(backlog);
      assertThat(new VertxTimers(sameLoop).backlog()).isSameAs(backlog);
      assertThat(new VertxTimers(otherLoop).backlog()).isNotSameAs(backlog);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private static Backlog backlog(int limit) {
    return new Backlog(ProbeScheduler.BACKLOG_WINDOW_MS, 10, limit);
  }

  private static ProbeScheduler<Integer> scheduler(
      ManualTimers timers, FakeProber prober, long seed, Backlog backlog) {
    return new ProbeScheduler<>(
        prober, timers, new SplittableRandom(seed), (k, t, r) -> {}, backlog);
  }

  private static void add(ProbeScheduler<Integer> scheduler, int i, Duration interval) {
    scheduler.add(
        i,
        ProbeSchedulerTest.target(i),
        CheckSpec.builder().timeout(interval).build(),
        new ProbeSchedule(interval, 10));
  }

  /** Every start of backends 0 .. n-1, each of which was probed more than 5 times. */
  private static List<Long> startsOfTheFirst(int n, FakeProber prober) {
    List<Long> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<Long> starts = prober.starts.get(ProbeSchedulerTest.target(i));
      assertThat(starts).as("backend %d keeps being probed", i).hasSizeGreaterThan(5);
      all.addAll(starts);
    }
    return all;
  }

  /**
   * No ten consecutive 10 ms buckets (the backlog's window) hold more than {@code limit} starts.
   */
  private static void assertAtMostPerWindow(List<Long> starts, int limit) {
    int[] perBucket = new int[(int) (starts.stream().mapToLong(t -> t).max().orElse(0) / 10 + 1)];
    starts.forEach(t -> perBucket[(int) (t / 10)]++);
    for (int b = 0; b + 10 <= perBucket.length; b++) {
      int inWindow = 0;
      for (int k = b; k < b + 10; k++) {
        inWindow += perBucket[k];
      }
      assertThat(inWindow)
          .as("starts from %d ms to %d ms", b * 10, b * 10 + 100)
          .isLessThanOrEqualTo(limit);
    }
  }
}
