package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.Vigil;
import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.runtime.PoolKey;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviewer;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.PoolOwners;
import dev.vigil.testing.SliceFlaps;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Two sharded replicas of the real operator against the Fabric8 mock server in CRUD mode: pools
 * spread over both, a planned move hands a pool over without any backend leaving the ready set, and
 * a replica whose shard Lease is taken over stops probing while its pools move to the other at
 * once. Slices are watched throughout: any endpoint published not-ready counts as a flap.
 */
class ShardingIT {
  private static final String NS = "shop";
  private static final String LEASE_NS = "vigil-system";
  private static final int POOLS = 4;
  private static final int PER_POOL = 2;
  private static final long INTERVAL = 300;

  /** Token "t" is the reporter "proxy", allowed every pool (reviews are not under test here). */
  private static final Reviewer EVERY_REPORTER =
      new Reviewer() {
        @Override
        public Optional<Identity> authenticate(String token) {
          return "t".equals(token)
              ? Optional.of(new Identity("proxy", "uid-proxy", List.of(), Map.of()))
              : Optional.empty();
        }

        @Override
        public boolean allows(Identity caller, Permission permission) {
          return true;
        }
      };

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private SliceFlaps flaps;
  private final List<Replica> replicas = new ArrayList<>();
  private final List<DemoBackend> backends = new ArrayList<>();

  /** A replica and its shard identity. */
  private record Replica(String identity, MockCluster.Replica replica) {
    Vigil.Running running() {
      return replica.running();
    }

    long probes() {
      return replica.probes();
    }
  }

  /** Before the cluster closes (JUnit closes {@code @AutoClose} fields after this). */
  @AfterEach
  void stopWatchingFlaps() {
    if (flaps != null) {
      flaps.close();
    }
  }

  private Replica start(String identity) {
    MockCluster.Replica started =
        cluster.operator(
            MockCluster.sharded(NS, identity, "zone-" + identity.substring(identity.length() - 1)),
            o -> o.reviewer(EVERY_REPORTER).election(MockCluster.election(identity)));
    Replica r = new Replica(identity, started);
    replicas.add(r);
    return r;
  }

  private void pools() {
    client.resource(Fixtures.policy(NS, "fast", INTERVAL + "ms", "250ms")).create();
    for (int p = 0; p < POOLS; p++) {
      backends.addAll(cluster.pods(NS, "web" + p, PER_POOL, 20 + p * PER_POOL));
      client.resource(Fixtures.pool(NS, "web" + p, "fast", "web" + p, cluster.port())).create();
    }
  }

  private Set<String> readyIps() {
    return cluster.readyIps(NS);
  }

  private Set<String> allIps() {
    Set<String> all = new TreeSet<>();
    backends.forEach(b -> all.add(b.host()));
    return all;
  }

  /** Each of {@code a} and {@code b} owns a pool, and every pool runs on its owner alone. */
  private boolean sharedBy(Replica a, Replica b) {
    Map<String, String> owners = owners();
    return owners.containsValue(a.identity())
        && owners.containsValue(b.identity())
        && settled(a, b);
  }

  private Map<String, String> owners() {
    return PoolOwners.labels(client.resources(BackendPool.class).inNamespace(NS).list().getItems());
  }

  /** Every pool is labelled, runs on its owner alone, and its status names the owner. */
  private boolean settled(Replica... live) {
    Map<String, String> owners = owners();
    for (BackendPool p : client.resources(BackendPool.class).inNamespace(NS).list().getItems()) {
      String owner = owners.get(p.getMetadata().getName());
      if (owner == null
          || p.getStatus() == null
          || !owner.equals(p.getStatus().getShard())
          || p.getStatus().getConditions().stream()
              .noneMatch(
                  c -> c.getType().equals(Conditions.PROBING) && c.getStatus().equals("True"))) {
        return false;
      }
      PoolKey key = new PoolKey(NS, p.getMetadata().getName());
      for (Replica r : live) {
        if (r.running().runtimes().get(key).isPresent() != r.identity().equals(owner)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Records each pool's writes as what they changed: its shard label, status.shard, or else. */
  private static io.fabric8.kubernetes.client.Watcher<BackendPool> writes(
      Map<String, List<String>> writes) {
    Map<String, BackendPool> last = new java.util.concurrent.ConcurrentHashMap<>();
    return new io.fabric8.kubernetes.client.Watcher<>() {
      @Override
      public void eventReceived(Action action, BackendPool pool) {
        BackendPool before = last.put(pool.getMetadata().getName(), pool);
        if (action != Action.MODIFIED || before == null) {
          return;
        }
        String labelBefore = PoolOwners.shardOf(before);
        String labelNow = PoolOwners.shardOf(pool);
        String statusBefore = before.getStatus() == null ? null : before.getStatus().getShard();
        String statusNow = pool.getStatus() == null ? null : pool.getStatus().getShard();
        String what =
            !java.util.Objects.equals(labelBefore, labelNow)
                ? "label " + labelBefore + " -> " + labelNow
                : !java.util.Objects.equals(statusBefore, statusNow)
                    ? "status.shard " + statusBefore + " -> " + statusNow
                    : "other: " + diff(before, pool);
        writes.computeIfAbsent(pool.getMetadata().getName(), k -> new ArrayList<>()).add(what);
      }

      @Override
      public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
    };
  }

  /** The status fields (JSON paths) whose values differ. */
  private static String diff(BackendPool before, BackendPool now) {
    var json = io.fabric8.kubernetes.client.utils.Serialization.jsonMapper();
    List<String> changed = new ArrayList<>();
    diff(
        "status", json.valueToTree(before.getStatus()), json.valueToTree(now.getStatus()), changed);
    return String.join(", ", changed);
  }

  private static void diff(
      String path,
      com.fasterxml.jackson.databind.JsonNode a,
      com.fasterxml.jackson.databind.JsonNode b,
      List<String> changed) {
    if (a != null
        && b != null
        && a.isContainerNode()
        && b.isContainerNode()
        && a.size() == b.size()) {
      if (a.isArray()) {
        for (int i = 0; i < a.size(); i++) {
          diff(path + "[" + i + "]", a.get(i), b.get(i), changed);
        }
      } else {
        a.fieldNames().forEachRemaining(f -> diff(path + "." + f, a.get(f), b.get(f), changed));
      }
    } else if (!java.util.Objects.equals(a, b)) {
      changed.add(path + ": " + a + " -> " + b);
    }
  }

  @Test
  void poolsSpreadOverBothReplicasAndMoveWithoutAFlap() throws Exception {
    pools();
    Replica a = start("replica-a");
    await().atMost(Duration.ofSeconds(20)).until(() -> readyIps().equals(allIps()) && settled(a));
    assertThat(owners().values()).containsOnly("replica-a");
    // every status says all is available (status lags the slices by up to its interval), so the
    // writes counted below are the move's alone
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                client.resources(BackendPool.class).inNamespace(NS).list().getItems().stream()
                    .allMatch(
                        p ->
                            p.getStatus() != null
                                && Integer.valueOf(PER_POOL).equals(p.getStatus().getAvailable())));
    Thread.sleep(500);

    flaps = new SliceFlaps(client, NS);
    Map<String, List<String>> writes = new java.util.concurrent.ConcurrentHashMap<>();
    try (var watch = client.resources(BackendPool.class).inNamespace(NS).watch(writes(writes))) {
      Replica b = start("replica-b");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> owners().containsValue("replica-b") && settled(a, b));
      assertThat(owners().values()).contains("replica-a", "replica-b");
      await().atMost(Duration.ofSeconds(10)).until(() -> b.probes() >= 3);
      Thread.sleep(2 * INTERVAL); // any status write the new owner would make after starting
      assertThat(readyIps()).isEqualTo(allIps());
      assertThat(flaps.seen()).as("endpoints published not ready during the handoff").isEmpty();
      // a planned move is two writes: the sharder's relabel and the old owner's handover status,
      // which names the new owner exactly as it would itself (it writes nothing on starting)
      owners()
          .forEach(
              (pool, owner) -> {
                if (owner.equals("replica-b")) {
                  assertThat(writes.get(pool))
                      .as("writes to %s while it moved", pool)
                      .containsExactly(
                          "label replica-a -> replica-b", "status.shard replica-a -> replica-b");
                } else {
                  assertThat(writes.get(pool)).as("writes to %s, not moved", pool).isNull();
                }
              });
    }

    Replica b = replicas.get(1);
    // the new owner publishes: a death in one of its pools leaves the ready set
    String moved =
        owners().entrySet().stream()
            .filter(e -> e.getValue().equals("replica-b"))
            .findFirst()
            .orElseThrow()
            .getKey();
    int index = Integer.parseInt(moved.substring(3)) * PER_POOL;
    backends.get(index).set(Mode.REFUSE).toCompletionStage().toCompletableFuture().join();
    String dead = backends.get(index).host();
    await().atMost(Duration.ofSeconds(10)).until(() -> !readyIps().contains(dead));

    // each Lease carries its replica's zone and failing share; either replica lists both
    await().atMost(Duration.ofSeconds(10)).until(() -> failingShareOnLease("replica-b") > 0);
    assertThat(failingShareOnLease("replica-a")).isZero();
    assertThat(b.replica().meters().get(CheckerGauges.FAILING_SHARE).gauge().value()).isPositive();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(replicas.get(0).running().ring().checkers())
                    .containsExactly(
                        new Voters.Checker("replica-a", "zone-a", false),
                        new Voters.Checker("replica-b", "zone-b", false)));
  }

  private double failingShareOnLease(String identity) {
    Lease lease =
        client.leases().inNamespace(LEASE_NS).withName(ShardLease.leaseName(identity)).get();
    return Double.parseDouble(
        lease.getMetadata().getAnnotations().get(CheckerReport.FAILING_SHARE));
  }

  @Test
  void aFencedReplicaStopsProbingAndItsPoolsMoveAtOnce() throws Exception {
    pools();
    Replica a = start("replica-a");
    Replica b = start("replica-b");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> readyIps().equals(allIps()) && sharedBy(a, b));
    flaps = new SliceFlaps(client, NS);

    // the sharder's takeover of a's Lease, as after a missed renewal
    Lease lease = client.leases().inNamespace(LEASE_NS).withName("vigil-shard-replica-a").get();
    lease.getSpec().setHolderIdentity("fenced-by-test");
    client.leases().inNamespace(LEASE_NS).resource(lease).update();

    await().atMost(Duration.ofSeconds(5)).until(() -> a.running().ring().lease().lost());
    await().atMost(Duration.ofSeconds(5)).until(() -> a.running().runtimes().all().isEmpty());
    long probesOfA = a.probes();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> owners().values().stream().allMatch("replica-b"::equals) && settled(b));
    Thread.sleep(3 * INTERVAL);
    assertThat(a.probes()).as("a fenced replica probes no more").isEqualTo(probesOfA);
    assertThat(readyIps()).isEqualTo(allIps());
    assertThat(flaps.seen()).as("endpoints published not ready while the pools moved").isEmpty();
  }
}
