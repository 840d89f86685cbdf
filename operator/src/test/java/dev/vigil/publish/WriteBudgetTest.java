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
    grantedOnlyAfter(budget, SECOND / 10 - 1, 1, waiter, 5);
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
    handOneTokenAtATime(budget, 9, order, threads);
    assertThat(order)
        .containsExactly(
            "slice", "slice", "slice", "status", "status", "status", "event", "event", "event");
  }

  /**
   * Issue 31: tenant A's 20 flapping pools have 20 slice writes waiting at a drained budget when
   * tenant B's one slice write arrives; B's is granted within one round (the second token at the
   * latest), not after A's 20. Tokens are handed one at a time by a manual clock.
   */
  @Test
  void anotherTenantsSliceWriteIsGrantedWithinOneRoundWhateverOneTenantQueued() throws Exception {
    WriteBudget budget = new WriteBudget(10, 1, now::get);
    budget.acquire(Priority.SLICE, "tenant-a");
    List<String> order = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int pool = 0; pool < 20; pool++) {
      threads.add(start(budget, Priority.SLICE, "tenant-a", order, "a-" + pool));
      int queued = pool + 1;
      await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == queued);
    }
    threads.add(start(budget, Priority.SLICE, "tenant-b", order, "b"));
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == 21);

    handOneTokenAtATime(budget, 21, order, threads);

    assertThat(order.indexOf("b")).as("B's write among the tokens: %s", order).isLessThan(2);
    assertThat(order.stream().filter(n -> n.startsWith("a-")).toList())
        .as("A's own writes stay in their order")
        .isEqualTo(java.util.stream.IntStream.range(0, 20).mapToObj(i -> "a-" + i).toList());
  }

  /**
   * A shard Lease renewal arrives when slice writes have drained the bucket and more wait: it is
   * granted at once, with the clock standing still (queued behind them, it would wait for tokens
   * that never come, and a replica that misses its renew deadline fences itself).
   */
  @Test
  void aLeaseWriteNeverWaitsBehindADrainedBudgetAndItsSliceBacklog() throws Exception {
    WriteBudget budget = new WriteBudget(10, 2, now::get);
    budget.acquire(Priority.SLICE, "tenant-a");
    budget.acquire(Priority.SLICE, "tenant-a");
    List<String> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      start(budget, Priority.SLICE, "tenant-a", order, "slice-" + i);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == 5);

    Thread renewal = start(budget, Priority.LEASE, "vigil-system", order, "lease");
    renewal.join(5_000);

    assertThat(order).as("the clock never moved").containsExactly("lease");
    assertThat(budget.granted(Priority.LEASE)).isEqualTo(1);
    assertThat(budget.granted(Priority.SLICE)).isEqualTo(2);
  }

  /** The token a Lease write borrowed is earned back before the next slice write gets one. */
  @Test
  void aLeaseWritesBorrowedTokenIsPaidBackBeforeTheNextWrite() throws Exception {
    WriteBudget budget = new WriteBudget(10, 1, now::get);
    budget.acquire(Priority.SLICE);
    budget.leaseWrite();
    Thread waiter = start(budget, Priority.SLICE, new CopyOnWriteArrayList<>(), "slice");
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == 1);

    // the first token earned pays the Lease's debt, the second is the waiter's
    grantedOnlyAfter(budget, SECOND / 10, SECOND / 10, waiter, 1);
  }

  /** A move's writes (relabel, handover status) go before a backlog of slice writes. */
  @Test
  void handoverWritesGoBeforeSliceWrites() throws Exception {
    WriteBudget budget = new WriteBudget(10, 1, now::get);
    budget.acquire(Priority.SLICE);
    List<String> order = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      threads.add(start(budget, Priority.SLICE, "tenant-a", order, "slice"));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.SLICE) == 3);
    threads.add(start(budget, Priority.HANDOVER, "tenant-b", order, "handover"));
    await().atMost(Duration.ofSeconds(5)).until(() -> budget.waiting(Priority.HANDOVER) == 1);
    handOneTokenAtATime(budget, 4, order, threads);
    assertThat(order).containsExactly("handover", "slice", "slice", "slice");
  }

  @Test
  void refusesANonsenseBudget() {
    assertThatThrownBy(() -> new WriteBudget(0, 1, now::get))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new WriteBudget(1, 0, now::get))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * The slice waiter is not granted after {@code notYet} nanoseconds (SLICE tokens stay at {@code
   * granted}), and is once {@code more} pass.
   */
  private void grantedOnlyAfter(
      WriteBudget budget, long notYet, long more, Thread waiter, long granted)
      throws InterruptedException {
    now.addAndGet(notYet);
    budget.wakeUp();
    Thread.sleep(50);
    assertThat(budget.granted(Priority.SLICE)).as("after %d ns", notYet).isEqualTo(granted);
    now.addAndGet(more);
    budget.wakeUp();
    waiter.join(5_000);
    assertThat(budget.granted(Priority.SLICE)).isEqualTo(granted + 1);
  }

  /** Moves the clock by one token {@code tokens} times, each time until its writer went. */
  private void handOneTokenAtATime(
      WriteBudget budget, int tokens, List<String> order, List<Thread> threads)
      throws InterruptedException {
    for (int token = 1; token <= tokens; token++) {
      now.addAndGet(SECOND / 10);
      budget.wakeUp();
      int expected = token;
      await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == expected);
    }
    for (Thread t : threads) {
      t.join(5_000);
    }
  }

  private static Thread start(
      WriteBudget budget, Priority priority, List<String> order, String name) {
    return start(budget, priority, "", order, name);
  }

  private static Thread start(
      WriteBudget budget, Priority priority, String namespace, List<String> order, String name) {
    Thread t =
        new Thread(
            () -> {
              try {
                budget.acquire(priority, namespace);
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
