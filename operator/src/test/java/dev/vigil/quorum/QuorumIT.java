package dev.vigil.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Quorum;
import dev.vigil.demo.DemoBackend;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviewer;
import dev.vigil.shard.Voters;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.PoolOwners;
import dev.vigil.testing.SliceFlaps;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Checker quorum between three sharded replicas of the real operator, one per zone, against the
 * Fabric8 mock server in CRUD mode (docs/design.md §8): the owner of a pool with {@code quorum}
 * asks the other two over their outcome ports, authenticated as the installation's own user. A
 * checker whose own network fails (every probe it makes fails, the others' pass) takes no backend
 * out: its Downs are not confirmed and no slice flaps. A real backend failure is confirmed by the
 * other zones and published.
 */
class QuorumIT {
  private static final String NS = "shop";
  private static final int BACKENDS = 4;
  private static final String SA_TOKEN = "vigil-sa-token";
  private static final String SA_USER = "system:serviceaccount:vigil-system:vigil";

  /** The installation's token is its ServiceAccount; reporters are not under test here. */
  private static final Reviewer REVIEWER =
      new Reviewer() {
        @Override
        public Optional<Identity> authenticate(String token) {
          return SA_TOKEN.equals(token)
              ? Optional.of(new Identity(SA_USER, "uid-vigil", List.of(), Map.of()))
              : Optional.empty();
        }

        @Override
        public boolean allows(Identity caller, Permission permission) {
          return true;
        }
      };

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final List<Replica> replicas = new ArrayList<>();
  private final List<DemoBackend> backends = new ArrayList<>();
  private SliceFlaps flaps;

  /** A replica, its zone, and a switch that breaks its own network: all its probes fail. */
  private record Replica(
      String identity, String zone, MockCluster.Replica replica, AtomicBoolean broken) {}

  /** Every probe fails at once while {@code broken}: the checker's own path is gone. */
  private record BrokenNetwork(Prober delegate, AtomicBoolean broken) implements Prober {
    @Override
    public Future<ProbeResult> probe(
        dev.vigil.probe.ProbeTarget target, dev.vigil.probe.CheckSpec spec) {
      return broken.get()
          ? Future.succeededFuture(
              ProbeResult.fail(Reason.CONNECTION_ERROR, "no route to host (test)", 0))
          : delegate.probe(target, spec);
    }
  }

  @AfterEach
  void stopWatchingFlaps() {
    if (flaps != null) {
      flaps.close();
    }
  }

  private Replica start(String zone) {
    String identity = "replica-" + zone;
    AtomicBoolean broken = new AtomicBoolean();
    MockCluster.Replica started =
        cluster.operator(
            cluster.newClient(c -> c.withOauthToken(SA_TOKEN)),
            MockCluster.sharded(NS, identity, "zone-" + zone, "--advertise-address=127.0.0.1"),
            o ->
                o.reviewer(REVIEWER)
                    .network(p -> new BrokenNetwork(p, broken))
                    .election(MockCluster.election(identity)));
    Replica r = new Replica(identity, "zone-" + zone, started, broken);
    replicas.add(r);
    return r;
  }

  /** A pool of {@link #BACKENDS} behind a policy with {@code quorum} (every default). */
  private void pool() {
    HealthPolicy policy = Fixtures.policy(NS, "fast", "300ms", "250ms");
    policy.getSpec().setQuorum(new Quorum());
    client.resource(policy).create();
    backends.addAll(cluster.pods(NS, "web", BACKENDS, 20));
    client.resource(Fixtures.pool(NS, "web", "fast", "web", cluster.port())).create();
  }

  /** Three zones up, the pool owned and all ready, every replica asking the others. */
  private Replica owner() {
    pool();
    for (String zone : List.of("a", "b", "c")) {
      start(zone);
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> readyIps().equals(allIps()) && ownerOrNull() != null && everyoneAdvertised());
    return ownerOrNull();
  }

  private Replica ownerOrNull() {
    var pools = client.resources(dev.vigil.api.v1alpha1.BackendPool.class).inNamespace(NS);
    String owner = PoolOwners.labels(pools.list().getItems()).get("web");
    return replicas.stream().filter(r -> r.identity().equals(owner)).findFirst().orElse(null);
  }

  private boolean everyoneAdvertised() {
    for (Replica r : replicas) {
      List<Voters.Checker> live = r.replica().running().ring().checkers();
      if (live.size() != 3 || live.stream().anyMatch(c -> c.address().isEmpty())) {
        return false;
      }
    }
    return true;
  }

  private Set<String> readyIps() {
    return cluster.readyIps(NS);
  }

  private Set<String> allIps() {
    return backends.stream().map(DemoBackend::host).collect(Collectors.toCollection(TreeSet::new));
  }

  /** The messages of the namespace's Events with this reason. */
  private List<String> events(String reason) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(Event::getMessage)
        .toList();
  }

  private List<String> otherZones(Replica owner) {
    return replicas.stream()
        .map(Replica::zone)
        .filter(z -> !z.equals(owner.zone()))
        .sorted()
        .toList();
  }

  @Test
  void aCheckersOwnNetworkFaultTakesNoBackendOut() {
    Replica owner = owner();
    flaps = new SliceFlaps(client, NS);
    owner.broken().set(true);
    // fall (3) x 300 ms, then the voters' own rise (2) x 300 ms, then the answer: the owner's
    // Down verdict on every backend goes to the others, who see each Up
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> String.join(" ", events("DownNotConfirmed")).contains("web-3 ("));
    assertThat(flaps.seen()).as("slices flapped").isEmpty();
    assertThat(readyIps()).isEqualTo(allIps());
    List<String> zones = otherZones(owner);
    assertThat(events("DownNotConfirmed"))
        .allSatisfy(m -> assertThat(m).contains("not confirmed by " + String.join(", ", zones)));
    assertThat(events("BackendDown")).isEmpty();
    // its failing share (all) against its peers' (none) makes it Suspect: the pool says so
    await().atMost(Duration.ofSeconds(30)).until(() -> "Confirming".equals(checkerSuspect()));
    assertThat(flaps.seen()).as("slices flapped").isEmpty();
  }

  /** The reason of the pool's CheckerSuspect condition when True, else null. */
  private String checkerSuspect() {
    var pool =
        client
            .resources(dev.vigil.api.v1alpha1.BackendPool.class)
            .inNamespace(NS)
            .withName("web")
            .get();
    if (pool == null || pool.getStatus() == null || pool.getStatus().getConditions() == null) {
      return null;
    }
    return pool.getStatus().getConditions().stream()
        .filter(c -> "CheckerSuspect".equals(c.getType()) && "True".equals(c.getStatus()))
        .map(c -> c.getReason())
        .findFirst()
        .orElse(null);
  }

  @Test
  void aRealFailureIsConfirmedByTheOtherZonesAndPublished() {
    Replica owner = owner();
    DemoBackend dead = backends.get(1);
    dead.set(DemoBackend.Mode.REFUSE).toCompletionStage().toCompletableFuture().join();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> !readyIps().contains(dead.host()) && !events("BackendDown").isEmpty());
    Set<String> others = allIps();
    others.remove(dead.host());
    assertThat(readyIps()).isEqualTo(others);
    List<String> zones = otherZones(owner);
    assertThat(events("BackendDown"))
        .singleElement()
        .satisfies(m -> assertThat(m).contains("confirmed by " + String.join(", ", zones)));
    assertThat(events("DownNotConfirmed")).isEmpty();
  }
}
