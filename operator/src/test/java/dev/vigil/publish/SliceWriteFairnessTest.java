package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.publish.WriteBudget.Priority;
import dev.vigil.runtime.PoolKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 31 item 3, the slice-write path as the operator wires it, minus the HTTP: each pool's
 * writes in a {@link CoalescingLane} on 8 writer threads (as {@code SlicePublisher} with {@code
 * Vigil}'s {@code SLICE_WRITERS}), each write taking a {@code SLICE} token of a small {@link
 * WriteBudget} in its pool's namespace (as {@code EndpointSliceWriter}). Tenant A has 20 pools,
 * each flapping (a write request every 100 ms); tenant B has one pool. The budget's clock is manual
 * and moves one token at a time, and the test waits after each token until every writer is back at
 * the budget, so what is counted is turns, never wall time.
 */
class SliceWriteFairnessTest {
  private static final int WRITERS = 8;
  private static final double QPS = 20; // one token every 50 ms: A's flapping alone wants 200/s
  private static final long NANOS_PER_TOKEN = (long) (1e9 / QPS);

  private final AtomicLong nanos = new AtomicLong();
  private final WriteBudget budget = new WriteBudget(QPS, 1, nanos::get);
  private final ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
  private final List<PoolKey> written = Collections.synchronizedList(new ArrayList<>());
  private final CoalescingLane<PoolKey> lane =
      new CoalescingLane<>(
          timers,
          writers,
          PoolKey::namespace,
          NamespacePace.unlimited(),
          WRITERS,
          () -> nanos.get() / 1_000_000,
          0, // no batch period: every flapping pool is always due, the hardest case
          key -> {
            try {
              budget.acquire(Priority.SLICE, key.namespace());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return CoalescingLane.Done.NOTHING;
            }
            written.add(key);
            return CoalescingLane.Done.WROTE;
          });

  @AfterEach
  void tearDown() {
    writers.shutdownNow();
    timers.shutdownNow();
  }

  @Test
  void anotherTenantsSliceWriteGoesOutWithinFourTokensOfTwentyFlappingPools() throws Exception {
    List<PoolKey> flapping = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      flapping.add(new PoolKey("tenant-a", "flapping-" + i));
    }
    PoolKey quiet = new PoolKey("tenant-b", "quiet");
    budget.acquire(Priority.SLICE, "tenant-a"); // the bucket is empty: every write waits a token
    flapping.forEach(lane::request);
    settled(0);

    int tokens = 0;
    for (; tokens < 40; tokens++) { // two seconds of flapping before tenant B's change
      nextToken(flapping, tokens);
    }
    assertThat(written).as("tenant A's pools all wrote meanwhile").containsAll(flapping);

    lane.request(quiet);
    int requestedAt = written.size();
    while (!written.contains(quiet) && tokens < 120) {
      nextToken(flapping, tokens++);
    }

    int turns = written.indexOf(quiet) + 1 - requestedAt;
    assertThat(written).as("B's write went out").contains(quiet);
    assertThat(turns)
        .as(
            "tokens from B's request to B's write (%s ms of budget time): a turn for a writer, a"
                + " turn at the budget; in one line it would wait behind A's 12 queued pools and"
                + " A's 7 other waiting writers",
            turns * NANOS_PER_TOKEN / 1_000_000)
        .isLessThanOrEqualTo(4);
  }

  /** One token's worth of time; every 100 ms each of tenant A's pools asks for a write. */
  private void nextToken(List<PoolKey> flapping, int token) {
    nanos.addAndGet(NANOS_PER_TOKEN);
    if (token % 2 == 1) {
      flapping.forEach(lane::request);
    }
    budget.wakeUp();
    settled(token + 1);
  }

  /** Waits until {@code tokens} writes went out and every writer waits at the budget again. */
  private void settled(int tokens) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> written.size() == tokens && budget.waiting(Priority.SLICE) == WRITERS);
  }
}
