package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The scheduler's queue of planned starts against a sorted reference, and one timer for all. */
class StartQueueTest {

  static final class Item extends StartQueue.Entry {
    final int id;
    long seq;

    Item(int id) {
      this.id = id;
    }
  }

  @Test
  void pollsInDueOrderThenInQueuedOrderThroughRandomAddsAndRemoves() {
    SplittableRandom r = new SplittableRandom(11);
    StartQueue queue = new StartQueue();
    // reference: due, then the order of queueing
    TreeSet<Item> reference =
        new TreeSet<>(Comparator.<Item>comparingLong(i -> i.due).thenComparingLong(i -> i.seq));
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      items.add(new Item(i));
    }
    long seq = 0;
    for (int step = 0; step < 200_000; step++) {
      Item item = items.get(r.nextInt(items.size()));
      int op = r.nextInt(3);
      if (op == 0 && !item.queued()) {
        queue.add(item, r.nextLong(0, 50)); // few distinct deadlines: ties are common
        item.seq = seq++;
        reference.add(item);
      } else if (op == 1) {
        reference.remove(item); // and dequeuing one that is not queued changes nothing
        queue.dequeue(item);
        assertThat(item.queued()).isFalse();
      } else if (op == 2 && !queue.isEmpty()) {
        Item expected = reference.pollFirst();
        assertThat(queue.nextDue()).isEqualTo(expected.due);
        assertThat(((Item) queue.poll()).id).as("step %d", step).isEqualTo(expected.id);
      }
      assertThat(queue.isEmpty()).isEqualTo(reference.isEmpty());
    }
    while (!reference.isEmpty()) {
      assertThat(((Item) queue.poll()).id).isEqualTo(reference.pollFirst().id);
    }
    assertThat(queue.nextDue()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aBackendWhoseStartThrowsStopsNoOtherBackend() {
    ManualTimers timers = new ManualTimers();
    AtomicInteger results = new AtomicInteger();
    Prober brokenForOne =
        (target, spec) -> {
          if (target.equals(ProbeSchedulerTest.target(0))) {
            throw new AssertionError("a prober defect that is not a RuntimeException");
          }
          return Future.succeededFuture(ProbeResult.pass("ok", 0));
        };
    ProbeScheduler<Integer> scheduler =
        new ProbeScheduler<>(
            brokenForOne,
            timers,
            new SplittableRandom(5),
            (k, t, res) -> results.incrementAndGet());
    for (int i = 0; i < 100; i++) {
      scheduler.add(
          i,
          ProbeSchedulerTest.target(i),
          ProbeSchedulerTest.spec(Duration.ofMillis(500)),
          new ProbeSchedule(Duration.ofSeconds(1), 10));
    }
    int thrown = 0;
    for (int ms = 0; ms < 10_000; ms++) {
      try {
        timers.advance(1);
      } catch (AssertionError e) {
        thrown++;
      }
    }
    assertThat(thrown).as("backend 0's starts threw").isPositive();
    assertThat(results.get()).as("the other 99 kept their cadence").isBetween(940, 1_040);
  }

  @Test
  void aThousandBackendsShareOneTimer() {
    ManualTimers timers = new ManualTimers();
    AtomicInteger results = new AtomicInteger();
    Prober instant = (target, spec) -> Future.succeededFuture(ProbeResult.pass("ok", 0));
    ProbeScheduler<Integer> scheduler =
        new ProbeScheduler<>(
            instant, timers, new SplittableRandom(3), (k, t, res) -> results.incrementAndGet());
    for (int i = 0; i < 1_000; i++) {
      scheduler.add(
          i,
          ProbeSchedulerTest.target(i),
          ProbeSchedulerTest.spec(Duration.ofMillis(500)),
          new ProbeSchedule(Duration.ofSeconds(1), 10));
    }
    assertThat(timers.pending()).isEqualTo(1);
    timers.advance(10_000);
    assertThat(results.get()).isBetween(9_500, 10_500);
    assertThat(timers.pending()).isEqualTo(1);
    for (int i = 0; i < 1_000; i++) {
      scheduler.remove(i);
    }
    assertThat(timers.pending()).isZero();
  }
}
