package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.vigil.StartOptions;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two replicas of the real operator, leader election on (as the chart runs them), against the
 * Fabric8 mock server in CRUD mode: one leads, probes and writes; the other stands by, ready, and
 * takes over within the Lease's duration when the leader stops.
 *
 * <p>What the mock server needs for a Lease, and this test gives it:
 *
 * <ul>
 *   <li>JOSDK checks at start that it may {@code create}, {@code update} and {@code get} Leases,
 *       with a {@code SelfSubjectRulesReview} ({@link MockCluster#grantLeaseRules}).
 *   <li>{@code coordination.k8s.io/v1} Leases: get, create and update with optimistic concurrency.
 *       CRUD mode serves them like any other kind, answers a create of an existing Lease with 409
 *       and an update carrying a stale resourceVersion with 409 ({@link
 *       #theMockServerRejectsAStaleLeaseUpdate}): that conflict is what keeps two candidates from
 *       both taking an expired Lease.
 *   <li>Distinct identities: JOSDK takes the HOSTNAME variable, which two replicas in one JVM
 *       share, so each gets its own through {@link StartOptions.Election}; and short Lease times,
 *       so a takeover takes seconds instead of JOSDK's 15 s.
 * </ul>
 *
 * <p>Not covered here: the Lease's real RBAC (the E2E tests run the chart's Role on a real API
 * server), exiting on a lost Lease ({@code StartOptions.onFenced} exits only in {@code vigil
 * operator}) and a SIGTERM of a leading process ({@code LeaderStopE2E}).
 */
class LeaderElectionIT {
  private static final String NS = "shop";
  private static final String LEASE_NS = "vigil-system";
  private static final String LEASE = "vigil";
  private static final long INTERVAL = 300;
  private static final Duration LEASE_DURATION = Duration.ofSeconds(3);
  private static final Duration RENEW_DEADLINE = Duration.ofSeconds(2);
  private static final Duration RETRY = Duration.ofMillis(300);

  /** A server per test: see MockCluster. */
  @AutoClose private final MockCluster cluster = MockCluster.start();

  private final KubernetesClient client = cluster.client();
  private List<DemoBackend> backends;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void setUp() {
    cluster.grantLeaseRules(LEASE_NS);
  }

  private MockCluster.Replica start(String identity) {
    return cluster.operator(
        MockCluster.config(
            NS, "--leader-election=true", "--lease-name=" + LEASE, "--lease-namespace=" + LEASE_NS),
        o ->
            o.election(new StartOptions.Election(identity, LEASE_DURATION, RENEW_DEADLINE, RETRY)));
  }

  private void webPool(int n) {
    client.resource(Fixtures.policy(NS, "fast", INTERVAL + "ms", "250ms")).create();
    backends = cluster.pods(NS, "web", n, 20);
    client.resource(Fixtures.pool(NS, "web", "fast", "web", cluster.port())).create();
  }

  private Set<String> readyIps() {
    return cluster.readyIps(NS);
  }

  private Set<String> ips(int... indexes) {
    Set<String> out = new TreeSet<>();
    for (int i : indexes) {
      out.add(backends.get(i).host());
    }
    return out;
  }

  private Lease lease() {
    return client.resources(Lease.class).inNamespace(LEASE_NS).withName(LEASE).get();
  }

  private String holder() {
    Lease l = lease();
    return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
  }

  private static long probes(MockCluster.Replica r) {
    return r.probes();
  }

  /**
   * A pool of three, replica-a started and holding the Lease, then replica-b, and the three
   * backends published: [a, b].
   */
  private List<MockCluster.Replica> leaderThenStandby() {
    webPool(3);
    MockCluster.Replica a = start("replica-a");
    await().atMost(Duration.ofSeconds(15)).until(() -> "replica-a".equals(holder()));
    MockCluster.Replica b = start("replica-b");
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps().equals(ips(0, 1, 2)));
    return List.of(a, b);
  }

  private HttpResponse<String> readyz(MockCluster.Replica r) throws Exception {
    return http.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + r.running().ops().port() + "/readyz"))
            .timeout(Duration.ofSeconds(5))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void oneOfTwoReplicasLeadsAndOnlyTheLeaderProbesAndWrites() throws Exception {
    List<MockCluster.Replica> started = leaderThenStandby();
    MockCluster.Replica a = started.get(0);
    MockCluster.Replica b = started.get(1);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              HttpResponse<String> standby = readyz(b);
              assertThat(standby.statusCode()).isEqualTo(200);
              assertThat(standby.body()).contains("standing by; leader is replica-a");
            });
    assertThat(readyz(a).statusCode()).isEqualTo(200);
    assertThat(readyz(a).body()).contains("leading");

    // The standby runs informers but no reconciler: no pool runtime, no probe, no write.
    Thread.sleep(5 * INTERVAL);
    assertThat(holder()).as("the Lease stays with the first replica").isEqualTo("replica-a");
    assertThat(probes(a)).as("probes of the leader").isGreaterThanOrEqualTo(3 * 3);
    assertThat(probes(b)).as("probes of the standby").isZero();
    assertThat(b.running().runtimes().all()).isEmpty();
    assertThat(b.meters().find("vigil_api_writes").counters())
        .allSatisfy(c -> assertThat(c.count()).isZero());

    // A death is published by the leader alone.
    backends.get(2).set(Mode.REFUSE).toCompletionStage().toCompletableFuture().join();
    await().atMost(Duration.ofSeconds(10)).until(() -> readyIps().equals(ips(0, 1)));
    assertThat(probes(b)).isZero();
  }

  @Test
  void theStandbyTakesOverWithinTheLeaseDurationAndPublishes() throws Exception {
    List<MockCluster.Replica> started = leaderThenStandby();
    MockCluster.Replica a = started.get(0);
    MockCluster.Replica b = started.get(1);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> readyz(b).body().contains("standing by; leader is replica-a"));
    int transitions = lease().getSpec().getLeaseTransitions();

    // what the stopping leader still ran when its Lease changed hands (a watch sees it at once)
    List<Integer> poolsAtRelease = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (var watch =
        client
            .leases()
            .inNamespace(LEASE_NS)
            .withName(LEASE)
            .watch(
                new io.fabric8.kubernetes.client.Watcher<Lease>() {
                  @Override
                  public void eventReceived(Action action, Lease lease) {
                    if (!"replica-a".equals(lease.getSpec().getHolderIdentity())) {
                      poolsAtRelease.add(a.running().runtimes().all().size());
                    }
                  }

                  @Override
                  public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
                })) {
      cluster.stop(a);
      await().atMost(Duration.ofSeconds(5)).until(() -> !poolsAtRelease.isEmpty());
    }
    // A graceful stop gives the Lease up (holder cleared) once the replica no longer probes or
    // writes: the standby takes it at its next try, not after the Lease duration.
    long released = System.nanoTime();
    assertThat(poolsAtRelease.get(0)).as("pools the leader still ran as it released").isZero();
    assertThat(holder()).as("the Lease after the leader stopped").isIn("", "replica-b");
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> "replica-b".equals(holder()));
    long takeoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
    // Fabric8 retries every RETRY plus up to 120 % jitter; far below the Lease's duration
    assertThat(takeoverMs)
        .as("takeover after the leader released the Lease")
        .isLessThan(RETRY.multipliedBy(22).dividedBy(10).plusMillis(500).toMillis())
        .isLessThan(LEASE_DURATION.minus(RETRY).toMillis());
    assertThat(lease().getSpec().getLeaseTransitions()).isEqualTo(transitions + 1);

    // The new leader probes and publishes: a death leaves the ready set.
    await().atMost(Duration.ofSeconds(10)).until(() -> probes(b) >= 3);
    backends.get(1).set(Mode.REFUSE).toCompletionStage().toCompletableFuture().join();
    await().atMost(Duration.ofSeconds(10)).until(() -> readyIps().equals(ips(0, 2)));
    assertThat(readyz(b).body()).contains("leading");
  }

  @Test
  void anUnshardedReplicaStandsByWhileAShardedInstallRuns() throws Exception {
    // a live shard Lease, as each replica of the chart's default (sharded) install renews
    Lease shard =
        client
            .resource(
                new LeaseBuilder()
                    .withNewMetadata()
                    .withName("vigil-shard-vigil-0")
                    .withNamespace(LEASE_NS)
                    .addToLabels("vigil.dev/ring", "vigil")
                    .endMetadata()
                    .withNewSpec()
                    .withHolderIdentity("vigil-0")
                    .withLeaseDurationSeconds(15)
                    .withRenewTime(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC))
                    .endSpec()
                    .build())
            .create();
    java.util.concurrent.CompletableFuture<MockCluster.Replica> started =
        java.util.concurrent.CompletableFuture.supplyAsync(() -> start("by-hand"));
    // longer than a cold start takes to lead without the wait (TLS warm-up, informers)
    await()
        .during(Duration.ofSeconds(15))
        .atMost(Duration.ofSeconds(16))
        .until(() -> holder() == null);
    assertThat(started).isNotDone();

    client.resource(shard).delete();
    MockCluster.Replica byHand = started.get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(15)).until(() -> "by-hand".equals(holder()));
    assertThat(readyz(byHand).body()).contains("leading");
  }

  @Test
  void theMockServerRejectsAStaleLeaseUpdate() {
    Lease created =
        client
            .resource(
                new LeaseBuilder()
                    .withNewMetadata()
                    .withName("probe-lease")
                    .withNamespace(LEASE_NS)
                    .endMetadata()
                    .withNewSpec()
                    .withHolderIdentity("x")
                    .endSpec()
                    .build())
            .create();
    Lease fresh = client.resource(created).edit(l -> withHolder(l, "y"));
    assertThat(fresh.getMetadata().getResourceVersion())
        .isNotEqualTo(created.getMetadata().getResourceVersion());

    assertThatThrownBy(() -> client.resource(withHolder(created, "z")).update())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(409));
    assertThatThrownBy(() -> client.resource(created).create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(409));
  }

  private static Lease withHolder(Lease l, String holder) {
    l.getSpec().setHolderIdentity(holder);
    return l;
  }
}
