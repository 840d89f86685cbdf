package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.publish.CoalescingLane.Done;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** One key's single flight: merged requests, spacing after a write, retries. */
class CoalescingLaneTest {
  private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(4);
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final AtomicInteger runs = new AtomicInteger();

  @AfterEach
  void tearDown() {
    executor.shutdownNow();
  }

  private CoalescingLane<String> lane(long spacingMs, CoalescingLane.Work<String> work) {
    return new CoalescingLane<>(
        executor,
        executor,
        k -> "ns",
        NamespacePace.unlimited(),
        Integer.MAX_VALUE,
        now::get,
        spacingMs,
        work);
  }

  @Test
  void requestsDuringARunMergeIntoOneMoreRun() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    CoalescingLane<String> lane =
        lane(
            0,
            k -> {
              if (runs.incrementAndGet() == 1) {
                started.countDown();
                awaitLatch(release);
              }
              return Done.WROTE;
            });
    lane.request("pool");
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    for (int i = 0; i < 50; i++) {
      lane.request("pool");
    }
    release.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2);
    Thread.sleep(200);
    assertThat(runs.get()).as("50 requests during the first run: one more run").isEqualTo(2);
  }

  @Test
  void aKeyThatWroteWaitsItsSpacingOneThatWroteNothingDoesNot() throws Exception {
    AtomicInteger wrote = new AtomicInteger();
    CoalescingLane<String> lane =
        lane(60_000, k -> k.equals("writes") ? wroteOnce(wrote) : countNothing());
    lane.request("writes");
    lane.request("idle");
    await().atMost(Duration.ofSeconds(5)).until(() -> wrote.get() == 1 && runs.get() == 1);
    lane.request("writes");
    lane.request("idle");
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2);
    Thread.sleep(300);
    assertThat(wrote.get()).as("the clock never moved: the spacing never passed").isEqualTo(1);
  }

  @Test
  void aFailedRunIsTriedAgainWithoutAnotherRequest() {
    CoalescingLane<String> lane =
        lane(0, k -> runs.incrementAndGet() == 1 ? Done.retryAfter(10) : Done.WROTE);
    lane.request("pool");
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2);
  }

  @Test
  void aForgottenKeyIsNotRetried() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    CoalescingLane<String> lane =
        lane(
            0,
            k -> {
              runs.incrementAndGet();
              ran.countDown();
              return Done.retryAfter(500);
            });
    lane.request("pool");
    assertThat(ran.await(5, TimeUnit.SECONDS)).isTrue();
    lane.forget("pool");
    Thread.sleep(1_500);
    assertThat(runs.get()).isEqualTo(1);
  }

  @Test
  void aNamespaceOverItsCapWaitsWithoutHoldingARunner() throws Exception {
    // 50 pools of one namespace flapping as fast as they can (each run asks for another), capped
    // at 20 runs a second (40 at once): the rest of its runs wait on a timer, not on a runner
    AtomicInteger runsA = new AtomicInteger();
    AtomicLong ranB = new AtomicLong();
    long t0 = System.nanoTime();
    LongSupplier ms = () -> (System.nanoTime() - t0) / 1_000_000;
    CoalescingLane<String>[] lane = new CoalescingLane[1];
    lane[0] =
        new CoalescingLane<>(
            executor,
            executor,
            k -> k.substring(0, 1),
            NamespacePace.perSecond(20),
            Integer.MAX_VALUE,
            ms,
            0,
            k -> {
              if (k.startsWith("a")) {
                runsA.incrementAndGet();
                lane[0].request(k);
              } else {
                ranB.set(ms.getAsLong());
              }
              return Done.WROTE;
            });
    for (int i = 0; i < 50; i++) {
      lane[0].request("a" + i);
    }
    Thread.sleep(500);
    long askedB = ms.getAsLong();
    lane[0].request("b");
    Thread.sleep(500);
    long elapsedMs = ms.getAsLong();
    int cap = 40 + (int) (20 * elapsedMs / 1000) + 1;
    assertThat(runsA.get())
        .as("namespace a's runs in %d ms, cap %d", elapsedMs, cap)
        .isLessThan(cap);
    await().atMost(Duration.ofSeconds(5)).until(() -> ranB.get() > 0);
    assertThat(ranB.get() - askedB)
        .as("namespace b's run waited for nothing of a's")
        .isLessThan(400);
  }

  @Test
  void aNamespaceWhoseWritesHangHoldsAtMostItsShareOfTheRunners() throws Exception {
    // four runners; namespace a's 20 pools each block in a write the API server does not answer:
    // they may hold 2 runners, so namespace b's pool still finds one
    CountDownLatch apiServer = new CountDownLatch(1);
    AtomicInteger startedA = new AtomicInteger();
    CountDownLatch ranB = new CountDownLatch(1);
    CoalescingLane<String> lane =
        new CoalescingLane<>(
            executor,
            executor,
            k -> k.substring(0, 1),
            NamespacePace.unlimited(),
            2,
            now::get,
            0,
            k -> {
              if (k.startsWith("a")) {
                startedA.incrementAndGet();
                awaitLatch(apiServer);
              } else {
                ranB.countDown();
              }
              return Done.WROTE;
            });
    try {
      for (int i = 0; i < 20; i++) {
        lane.request("a" + i);
      }
      await().atMost(Duration.ofSeconds(5)).until(() -> startedA.get() == 2);
      lane.request("b");
      assertThat(ranB.await(3, TimeUnit.SECONDS)).as("b ran while a's writes hung").isTrue();
      assertThat(startedA.get()).as("a's writes running at once").isEqualTo(2);
    } finally {
      apiServer.countDown();
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> startedA.get() == 20);
  }

  @Test
  void keysPassedOverWhileTheirNamespaceWasFullAllRunLater() throws Exception {
    // 300 keys of one namespace, at most 2 at once, on 4 runners: the runs that find the
    // namespace full and go back empty-handed must be made up when a slot frees, however the
    // finishing runs interleave (a CI run once left 18 keys waiting for good)
    AtomicInteger ran = new AtomicInteger();
    AtomicInteger atOnce = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    CoalescingLane<String> lane =
        new CoalescingLane<>(
            executor,
            executor,
            k -> "a",
            NamespacePace.unlimited(),
            2,
            now::get,
            0,
            k -> {
              mostAtOnce.accumulateAndGet(atOnce.incrementAndGet(), Math::max);
              try {
                Thread.sleep(0, 200_000);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              atOnce.decrementAndGet();
              ran.incrementAndGet();
              return Done.WROTE;
            });
    for (int i = 0; i < 300; i++) {
      lane.request("a" + i);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> ran.get() == 300);
    assertThat(mostAtOnce.get()).as("runs of one namespace at once").isLessThanOrEqualTo(2);
  }

  private Done wroteOnce(AtomicInteger wrote) {
    wrote.incrementAndGet();
    return Done.WROTE;
  }

  private Done countNothing() {
    runs.incrementAndGet();
    return Done.NOTHING;
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      latch.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
