package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.demo.EmbeddedApiServer;
import dev.vigil.publish.WriteBudget;
import dev.vigil.publish.WriteBudget.Priority;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.PoolOwners;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The sharder against the Fabric8 mock server in CRUD mode, with a manual clock: it assigns pools,
 * rate-limits planned moves, fences an expired shard Lease before moving that shard's pools, and a
 * replica's {@link ShardLease} stops it writing when its Lease is taken over or goes unrenewed.
 */
class SharderIT {
  private static final String NS = "shop";
  private static final String LEASE_NS = "vigil-system";

  @AutoClose private final EmbeddedApiServer api = EmbeddedApiServer.start();
  private final KubernetesClient client = api.client();
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
  private final WriteBudget budget = WriteBudget.unlimited();
  private Sharder sharder;

  /** Before the API server closes (JUnit closes {@code @AutoClose} fields after this). */
  @AfterEach
  void stopSharder() {
    if (sharder != null) {
      sharder.stop();
    }
  }

  private ShardConfig config(String identity, double moves) {
    return ShardConfig.of(identity, LEASE_NS, 15, moves);
  }

  private ShardLease lease(String identity, Runnable onLost) {
    ShardLease lease =
        new ShardLease(client, budget, config(identity, 0), identity, now::get, onLost);
    lease.tick();
    return lease;
  }

  private void pools(int n) {
    client.resource(Fixtures.policy(NS, "fast", "1s", "250ms")).create();
    for (int i = 0; i < n; i++) {
      client.resource(Fixtures.pool(NS, "p" + i, "fast", "app" + i, 8080)).create();
    }
  }

  private Map<String, String> owners() {
    return PoolOwners.labels(client.resources(BackendPool.class).inNamespace(NS).list().getItems());
  }

  private long ownedBy(String shard) {
    return owners().values().stream().filter(shard::equals).count();
  }

  private void startSharder(double moves) {
    sharder =
        new Sharder(
            client, budget, config("a", moves), Set.of(NS), now::get, new SimpleMeterRegistry());
    sharder.startInformers();
    await().atMost(Duration.ofSeconds(10)).until(sharder::synced);
  }

  /** Rounds until the caches show what the last round wrote. */
  private List<ShardPlanner.Action> round() {
    List<ShardPlanner.Action> actions = sharder.round();
    pause();
    return actions;
  }

  /** Sharder rounds until the condition holds (the caches catch up between rounds). */
  private void roundsUntil(java.util.concurrent.Callable<Boolean> condition) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              sharder.round();
              return condition.call();
            });
  }

  private static void pause() {
    try {
      Thread.sleep(300);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void assignsEveryPoolToALiveShardAndSpreadsThem() {
    pools(30);
    lease("a", () -> {});
    lease("b", () -> {});
    startSharder(0.1);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> sharder.round().isEmpty() && !owners().containsValue(null));
    Map<String, Long> counts =
        owners().values().stream().collect(Collectors.groupingBy(s -> s, Collectors.counting()));
    assertThat(counts.keySet()).containsExactlyInAnyOrder("a", "b");
    assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(13L, 16L));
  }

  /** Every label patch of the sharder takes a HANDOVER token of the one budget. */
  @Test
  void everyRelabelTakesAHandoverToken() {
    pools(12);
    lease("a", () -> {});
    startSharder(0.1);
    roundsUntil(() -> !owners().containsValue(null));
    assertThat(budget.granted(Priority.HANDOVER)).isEqualTo(12);
    assertThat(budget.granted(Priority.LEASE)).as("the shard Lease's create").isEqualTo(1);
  }

  /**
   * The write budget drained by slice writes with more waiting, and its clock standing still (no
   * token ever comes back): the shard Lease is still created and renewed, each write counted as a
   * LEASE token. A renewal that queued behind the slice writes would never return, and a replica
   * that misses its renew deadline fences itself.
   */
  @Test
  void shardLeaseRenewalsNeverWaitBehindADrainedBudget() throws Exception {
    WriteBudget drained = new WriteBudget(1, 1, () -> 0L);
    drained.acquire(Priority.SLICE, NS);
    Thread sliceWriter =
        new Thread(
            () -> {
              try {
                drained.acquire(Priority.SLICE, NS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    sliceWriter.setDaemon(true);
    sliceWriter.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> drained.waiting(Priority.SLICE) == 1);
    ShardLease lease = new ShardLease(client, drained, config("a", 0), "a", now::get, () -> {});
    try {
      org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () -> {
            lease.tick();
            now.addAndGet(5_000);
            lease.tick();
          });
      assertThat(lease.writable()).isTrue();
      assertThat(drained.granted(Priority.LEASE)).as("create, renew").isEqualTo(2);
      Lease stored =
          client.leases().inNamespace(LEASE_NS).withName(ShardLease.leaseName("a")).get();
      assertThat(ShardLease.millis(stored.getSpec().getRenewTime())).isEqualTo(now.get());
    } finally {
      sliceWriter.interrupt();
    }
  }

  @Test
  void plannedMovesAreRateLimitedRelabels() {
    pools(40);
    lease("a", () -> {});
    startSharder(0.1);
    roundsUntil(() -> !owners().containsValue(null));
    assertThat(owners().values()).containsOnly("a");

    lease("b", () -> {});
    await().atMost(Duration.ofSeconds(5)).until(() -> sharder.synced());
    roundsUntil(() -> ownedBy("b") > 0);
    // 10 % of 40 pools a minute: a bucket of 4 moves, each one relabel, then nothing until time
    // passes
    assertThat(ownedBy("b")).isEqualTo(4);
    assertThat(round()).isEmpty();
    assertThat(ownedBy("b")).isEqualTo(4);

    now.addAndGet(30_000);
    lease("a", () -> {});
    lease("b", () -> {});
    pause(); // the sharder's Lease informer sees both renewals
    round();
    assertThat(ownedBy("b")).as("30 s earn 2 moves").isEqualTo(6);
  }

  @Test
  void anExpiredShardIsFencedFirstThenItsPoolsMoveAtOnce() {
    pools(20);
    lease("a", () -> {});
    lease("b", () -> {});
    startSharder(0.1);
    roundsUntil(() -> !owners().containsValue(null));
    long onB = owners().values().stream().filter("b"::equals).count();
    assertThat(onB).isPositive();

    // b stops renewing; a keeps renewing and the sharder runs a round a second; about 15 s later
    // b's Lease expired and is fenced
    roundsUntilFenced("b", 20);
    Lease fenced = client.leases().inNamespace(LEASE_NS).withName("vigil-shard-b").get();
    assertThat(fenced.getSpec().getHolderIdentity()).isEqualTo("fenced-by-a");
    // b's pools move in the round that fenced it, all of them, not 10 % a minute
    assertThat(owners().values()).containsOnly("a");
  }

  @Test
  void afterStandingStillItselfTheSharderLetsTheReplicasRenewBeforeItFences() {
    pools(10);
    lease("a", () -> {});
    ShardLease b = lease("b", () -> {});
    startSharder(0.1);
    roundsUntil(() -> !owners().containsValue(null));

    // the whole node stood still 20 s: no renewal, no round; both Leases look expired
    now.addAndGet(20_000);
    assertThat(round())
        .as("the first round after the pause")
        .doesNotContain(new ShardPlanner.Fence("a"), new ShardPlanner.Fence("b"));
    // b renews as soon as it runs again; a, the sharder's own replica, too
    lease("a", () -> {});
    b.tick();
    pause();
    for (int s = 0; s < 12; s++) {
      now.addAndGet(1_000);
      if (s % 4 == 0) {
        lease("a", () -> {});
        b.tick();
      }
      assertThat(sharder.round())
          .doesNotContain(new ShardPlanner.Fence("a"), new ShardPlanner.Fence("b"));
    }
    assertThat(
            client
                .leases()
                .inNamespace(LEASE_NS)
                .withName("vigil-shard-b")
                .get()
                .getSpec()
                .getHolderIdentity())
        .isEqualTo("b");

    // b stops renewing now: once its Lease expires it is fenced (the pause is over)
    roundsUntilFenced("b", 16);
  }

  @Test
  void aNewSharderFencesNothingForARenewDeadline() {
    pools(10);
    lease("a", () -> {});
    lease("b", () -> {});
    // b's Lease expired while no sharder ran (the old leader lost its election in the same freeze)
    now.addAndGet(16_000);
    lease("a", () -> {});
    startSharder(0.1);
    assertThat(round())
        .as("the new sharder's first round")
        .doesNotContain(new ShardPlanner.Fence("b"));
    // b does not renew: it is fenced once the new sharder has watched for a renew deadline
    roundsUntilFenced("b", 12);
    assertThat(now.get()).isGreaterThanOrEqualTo(1_000_000_000_000L + 16_000 + 10_000);
  }

  /** One round per simulated second, a renewing, until b is fenced (at most {@code seconds}). */
  private void roundsUntilFenced(String shard, int seconds) {
    for (int s = 0; s < seconds; s++) {
      now.addAndGet(1_000);
      lease("a", () -> {});
      if (sharder.round().contains(new ShardPlanner.Fence(shard))) {
        return;
      }
      pause();
    }
    throw new AssertionError(shard + " not fenced within " + seconds + " s of rounds");
  }

  @Test
  void aRoundWritesItsLabelsUpToWritersAtATimeAndWaitsForAll() {
    pools(3 * Sharder.WRITERS);
    lease("a", () -> {});
    // each patch waits until WRITERS of them are running at once (or 1 s): one after another,
    // never more than one runs
    CountDownLatch started = new CountDownLatch(Sharder.WRITERS);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(Sharder.WRITERS);
    Executor gated =
        task ->
            threads.execute(
                () -> {
                  most.accumulateAndGet(running.incrementAndGet(), Math::max);
                  started.countDown();
                  try {
                    started.await(1, TimeUnit.SECONDS);
                    task.run();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } finally {
                    running.decrementAndGet();
                  }
                });
    try {
      sharder =
          new Sharder(
              client,
              budget,
              config("a", 0.1),
              Set.of(NS),
              now::get,
              new SimpleMeterRegistry(),
              gated);
      sharder.startInformers();
      await().atMost(Duration.ofSeconds(10)).until(sharder::synced);

      List<ShardPlanner.Action> actions = sharder.round();

      assertThat(actions).hasSize(3 * Sharder.WRITERS);
      assertThat(most.get()).as("patches in flight at once").isEqualTo(Sharder.WRITERS);
      assertThat(owners().values())
          .as("every pool labelled when that one round returned")
          .containsOnly("a");
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aReplicaStopsWritingWhenItsLeaseIsTakenOverOrNotRenewedInTime() {
    AtomicLong lostA = new AtomicLong();
    ShardLease a = lease("a", lostA::incrementAndGet);
    assertThat(a.writable()).isTrue();
    Lease l = client.leases().inNamespace(LEASE_NS).withName("vigil-shard-a").get();
    assertThat(l.getMetadata().getLabels()).containsEntry(ShardConfig.RING_LABEL, "vigil");
    l.getSpec().setHolderIdentity("fenced-by-b");
    client.leases().inNamespace(LEASE_NS).resource(l).update();
    a.tick();
    assertThat(a.writable()).isFalse();
    assertThat(lostA).hasValue(1);
    a.tick();
    assertThat(lostA).as("told once").hasValue(1);

    AtomicLong lostC = new AtomicLong();
    ShardLease c = lease("c", lostC::incrementAndGet);
    now.addAndGet(9_999);
    assertThat(c.writable()).isTrue();
    now.addAndGet(1);
    assertThat(c.writable()).as("10 s (two thirds of 15) without a renewal").isFalse();
    api.server().shutdown(); // the API server is gone: the renewal fails
    c.tick();
    assertThat(lostC).hasValue(1);
  }

  @Test
  void theLeaseOfAShardGoneForTenLeaseDurationsIsDeleted() {
    pools(4);
    lease("a", () -> {});
    lease("old", () -> {}).release(); // a replica that stopped (a rollout's old Pod)
    startSharder(0.1);
    roundsUntil(() -> !owners().containsValue(null));
    assertThat(client.leases().inNamespace(LEASE_NS).withName("vigil-shard-old").get())
        .as("gone, but not for ten Lease durations yet")
        .isNotNull();

    now.addAndGet(10 * 15_000);
    lease("a", () -> {});
    pause();
    roundsUntil(
        () -> client.leases().inNamespace(LEASE_NS).withName("vigil-shard-old").get() == null);
    assertThat(client.leases().inNamespace(LEASE_NS).withName("vigil-shard-a").get()).isNotNull();
  }
}
