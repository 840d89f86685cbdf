package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.shard.ShardConfig;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.SliceFlaps;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three sharded operators (in this JVM, each with its own client authenticated as the chart's
 * ServiceAccount) on the real control plane: 300 pools spread within 15 % of a third each; a
 * replica that crashes (its client and Vert.x closed at once, its Lease left to expire) has its
 * pools taken over within the shard Lease's duration + 5 s; a rolling restart of all three, one at
 * a time, publishes no backend as not ready and leaves every pool owned. The pools' slices are
 * watched from the first moment every backend is ready: any endpoint published not ready, or any
 * slice deleted, is a flap.
 */
class ShardingE2E {
  private static final int PORT = 8080;
  private static final int POOLS = 300;
  private static final int HOSTS = 4;
  private static final int LEASE_S = 6;
  private static final Duration CONVERGE = Duration.ofSeconds(180);

  private E2eCluster cluster;
  private String ns;
  private TestHosts hosts;
  private OperatorLog log;
  private SliceFlaps flaps;
  private final Map<String, InProcessOperator> replicas = new LinkedHashMap<>();

  @BeforeEach
  void setUp() {
    cluster = E2eCluster.get();
    cluster.installChart();
    ns = cluster.freshNamespace("shard");
    hosts = new TestHosts(cluster, PORT);
    log = OperatorLog.attach();
  }

  @AfterEach
  void tearDown() {
    try {
      if (flaps != null) {
        flaps.close();
      }
      replicas.values().forEach(InProcessOperator::close);
      hosts.close();
    } finally {
      log.detach();
    }
    assertThat(log.forbidden()).as("requests the chart's RBAC refused").isEmpty();
  }

  private String identity(String name) {
    return name + "-" + ns;
  }

  private InProcessOperator start(String name) {
    InProcessOperator o =
        InProcessOperator.startSharded(
            cluster,
            ns,
            "vigil-" + ns,
            ShardConfig.of(identity(name), E2eCluster.RELEASE_NAMESPACE, LEASE_S, 0));
    replicas.put(name, o);
    return o;
  }

  private List<BackendPool> pools() {
    return cluster.admin().resources(BackendPool.class).inNamespace(ns).list().getItems();
  }

  /** Pools per owner, from status.shard (written by the owner once it runs the pool). */
  private Map<String, Long> owners() {
    return pools().stream()
        .collect(
            Collectors.groupingBy(
                p ->
                    p.getStatus() == null || p.getStatus().getShard() == null
                        ? "none"
                        : p.getStatus().getShard(),
                Collectors.counting()));
  }

  /** Every pool owned by a live replica, by label and by status, and no drain pending. */
  private boolean settled(String... live) {
    List<String> ids = java.util.Arrays.stream(live).map(this::identity).toList();
    for (BackendPool p : pools()) {
      Map<String, String> labels = p.getMetadata().getLabels();
      String shard = labels == null ? null : labels.get(ShardConfig.SHARD_LABEL);
      if (shard == null
          || !ids.contains(shard)
          || labels.containsKey(ShardConfig.DRAIN_LABEL)
          || p.getStatus() == null
          || !shard.equals(p.getStatus().getShard())) {
        return false;
      }
    }
    return true;
  }

  private long readyPools() {
    Map<String, Boolean> ready = new HashMap<>();
    for (EndpointSlice s :
        cluster.admin().discovery().v1().endpointSlices().inNamespace(ns).list().getItems()) {
      String svc = s.getMetadata().getLabels().get("kubernetes.io/service-name");
      boolean all =
          s.getEndpoints() != null
              && !s.getEndpoints().isEmpty()
              && s.getEndpoints().stream()
                  .allMatch(e -> Boolean.TRUE.equals(e.getConditions().getReady()));
      ready.merge(svc, all, Boolean::logicalAnd);
    }
    return ready.values().stream().filter(b -> b).count();
  }

  @Test
  void threeReplicasShareThePoolsSurviveACrashAndARollingRestartWithoutAFlap() {
    for (int h = 1; h <= HOSTS; h++) {
      hosts.start(h);
    }
    start("a");
    start("b");
    start("c");
    KubernetesClient admin = cluster.admin();
    // 300 pools on 4 Python test hosts: every 2 s, 1 s timeout (150 probes/s in all)
    admin.resource(Fixtures.policy(ns, "fast", "2s", "1s")).create();
    for (int i = 0; i < POOLS; i++) {
      cluster.createRunningPod(ns, "p" + i, "p" + i, TestHosts.address(1 + i % HOSTS));
      // headless: the test API server's Service IP range holds fewer than 300 ClusterIPs
      admin
          .resource(
              new ServiceBuilder()
                  .withNewMetadata()
                  .withName("p" + i)
                  .withNamespace(ns)
                  .endMetadata()
                  .withNewSpec()
                  .withClusterIP("None")
                  .addNewPort()
                  .withName("http")
                  .withPort(80)
                  .withNewTargetPort(PORT)
                  .withProtocol("TCP")
                  .endPort()
                  .endSpec()
                  .build())
          .create();
      admin.resource(Fixtures.pool(ns, "p" + i, "fast", "p" + i, PORT)).create();
    }

    long t0 = System.nanoTime();
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> settled("a", "b", "c") && readyPools() == POOLS);
    System.out.println(
        "sharding: 300 pools owned and published in "
            + Duration.ofNanos(System.nanoTime() - t0).toMillis()
            + " ms; per shard "
            + owners());
    assertThat(owners().values()).allSatisfy(n -> assertThat(n).isBetween(85L, 115L));

    flaps = new SliceFlaps(admin, ns);

    // a crash of a replica that does not lead (a leader's crash adds the leader Lease's 15 s):
    // its client and Vert.x close at once; its Lease is left to expire
    String leader =
        admin
            .leases()
            .inNamespace(E2eCluster.RELEASE_NAMESPACE)
            .withName("vigil-" + ns)
            .get()
            .getSpec()
            .getHolderIdentity();
    String victim =
        List.of("a", "b", "c").stream()
            .filter(n -> !identity(n).equals(leader))
            .findFirst()
            .orElseThrow();
    String crashed = identity(victim);
    List<String> itsPools =
        pools().stream()
            .filter(p -> crashed.equals(p.getStatus().getShard()))
            .map(p -> p.getMetadata().getName())
            .toList();
    long crash = System.nanoTime();
    replicas.get(victim).crash();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                pools().stream()
                    .filter(p -> itsPools.contains(p.getMetadata().getName()))
                    .allMatch(
                        p ->
                            p.getStatus().getShard() != null
                                && !crashed.equals(p.getStatus().getShard())));
    long takeoverMs = Duration.ofNanos(System.nanoTime() - crash).toMillis();
    System.out.println(
        "sharding: "
            + itsPools.size()
            + " pools of the crashed replica owned again after "
            + takeoverMs
            + " ms");
    assertThat(takeoverMs).isLessThanOrEqualTo(LEASE_S * 1000L + 5_000);
    String[] survivors =
        List.of("a", "b", "c").stream().filter(n -> !n.equals(victim)).toArray(String[]::new);
    await().atMost(CONVERGE).until(() -> settled(survivors));
    assertThat(readyPools()).isEqualTo(POOLS);
    assertThat(flaps.seen()).as("endpoints not ready after the crash").isEmpty();

    // a rolling restart: the crashed replica comes back, then each stops and starts in turn
    replicas.remove(victim).close();
    start(victim);
    await().atMost(CONVERGE).until(() -> settled("a", "b", "c") && owners().size() == 3);
    for (String name : List.of("a", "b", "c")) {
      List<String> others =
          new ArrayList<>(List.of("a", "b", "c").stream().filter(n -> !n.equals(name)).toList());
      replicas.remove(name).close();
      await().atMost(CONVERGE).until(() -> settled(others.toArray(String[]::new)));
      start(name);
      await().atMost(CONVERGE).until(() -> settled("a", "b", "c") && owners().size() == 3);
      System.out.println("sharding: restarted " + name + "; per shard " + owners());
    }
    assertThat(readyPools()).isEqualTo(POOLS);
    assertThat(flaps.seen()).as("endpoints not ready during the rolling restart").isEmpty();
  }
}
