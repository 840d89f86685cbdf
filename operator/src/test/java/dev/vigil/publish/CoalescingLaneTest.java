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
    return new CoalescingLane<>(executor, executor, k -> "ns", now::get, spacingMs, work);
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
