package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vigil.publish.WriteBudget.Priority;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The write budget with a manual clock: rate, burst and priority order. */
class WriteBudgetTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong now = new AtomicLong();

  @Test
  void aFullBucketGivesTheBurstAtOnceThenTheRate() throws Exception {
    WriteBudget budget = new WriteBudget(10, 5, now::get);
    for (int i = 0; i < 5; i++) {
      budget.acquire(Priority.SLICE);
    }
    Thread waiter = start(budget, Priority.SLICE, new CopyOnWriteArrayList<>(), "w");
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == 1);
    now.addAndGet(SECOND / 10 - 1);
    budget.wakeUp();
    Thread.sleep(50);
    assertThat(budget.granted(Priority.SLICE)).as("one nanosecond before a token").isEqualTo(5);
    now.addAndGet(1);
    budget.wakeUp();
    waiter.join(5_000);
    assertThat(budget.granted(Priority.SLICE)).isEqualTo(6);
  }

  @Test
  void theBucketNeverHoldsMoreThanTheBurst() throws Exception {
    WriteBudget budget = new WriteBudget(10, 3, now::get);
    now.addAndGet(3600 * SECOND);
    for (int i = 0; i < 3; i++) {
      budget.acquire(Priority.EVENT);
    }
    Thread waiter = start(budget, Priority.EVENT, new CopyOnWriteArrayList<>(), "w");
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.EVENT) == 1);
    Thread.sleep(50);
    assertThat(budget.granted(Priority.EVENT)).isEqualTo(3);
    now.addAndGet(SECOND / 10);
    budget.wakeUp();
    waiter.join(5_000);
    assertThat(budget.granted(Priority.EVENT)).isEqualTo(4);
  }

  @Test
  void slicesGoBeforeStatusBeforeEventsWhateverTheOrderOfArrival() throws Exception {
    WriteBudget budget = new WriteBudget(10, 1, now::get);
    budget.acquire(Priority.SLICE);
    List<String> order = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      threads.add(start(budget, Priority.EVENT, order, "event"));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.EVENT) == 3);
    for (int i = 0; i < 3; i++) {
      threads.add(start(budget, Priority.STATUS, order, "status"));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.STATUS) == 3);
    for (int i = 0; i < 3; i++) {
      threads.add(start(budget, Priority.SLICE, order, "slice"));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == 3);
    for (int token = 1; token <= 9; token++) {
      now.addAndGet(SECOND / 10);
      budget.wakeUp();
      int expected = token;
      await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == expected);
    }
    for (Thread t : threads) {
      t.join(5_000);
    }
    assertThat(order)
        .containsExactly(
            "slice", "slice", "slice", "status", "status", "status", "event", "event", "event");
  }

  @Test
  void refusesANonsenseBudget() {
    assertThatThrownBy(() -> new WriteBudget(0, 1, now::get))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new WriteBudget(1, 0, now::get))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static Thread start(
      WriteBudget budget, Priority priority, List<String> order, String name) {
    Thread t =
        new Thread(
            () -> {
              try {
                budget.acquire(priority);
                order.add(name);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    t.setDaemon(true);
    t.start();
    return t;
  }
}
