package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Quorum;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.PoolOwners;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@link QuorumE2E} stands on: three sharded operator processes, one per zone ({@code
 * zone-a/b/c}), each probing from its own address on the bridge ({@code 198.18.0.2/.3/.4}); three
 * Nodes labelled with those zones; two backends per zone, each an {@code e2e/backend.py} on an
 * address of its own on the zone's test host (host 1, 2, 3), counting the requests it gets, with a
 * running Pod on the zone's Node; one HealthPolicy with {@code quorum: {}} (interval 1 s, fast
 * interval 500 ms so that confirming, at fall 3, adds at most one interval; timeout 400 ms, fall 3,
 * rise 2, no jitter) and pools that each select every backend, enough of them that each replica
 * owns some. {@link #close()} stops the processes and backends, deletes the Nodes and restores the
 * network.
 */
final class QuorumCluster implements AutoCloseable {
  static final int PORT = 8080;
  static final List<String> ZONES = List.of("zone-a", "zone-b", "zone-c");
  static final long INTERVAL_MS = 1_000;
  static final long TIMEOUT_MS = 400;

  /** While a backend is in transition; the voters confirm at this pace (docs/design.md §8). */
  static final long FAST_INTERVAL_MS = 500;

  static final int FALL = 3;
  static final int LEASE_S = 15;
  private static final int BACKENDS_PER_ZONE = 2;
  private static final int FIRST_POOLS = 9;
  private static final int MORE_POOLS = 6;
  private static final Duration READY = Duration.ofSeconds(180);
  static final String SUSPECT = "vigil_checker_suspect";
  static final String FAILING_SHARE = "vigil_checker_failing_share";

  final E2eCluster cluster;
  final String ns;
  final AuditLog audit;
  final CheckerNetwork network;
  final HostBackends backends;
  private final Map<String, ProcessOperator> replicas = new LinkedHashMap<>();
  private final List<String> nodes = new ArrayList<>();
  private final List<String> pools = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  QuorumCluster() {
    cluster = E2eCluster.withChart();
    ns = cluster.freshNamespace("quorum");
    audit = new AuditLog(cluster.auditLog());
    network = new CheckerNetwork(cluster);
    backends = new HostBackends(cluster);
  }

  /** The checker of zone {@code z} probes from this address. */
  static String source(String zone) {
    return "198.18.0." + (2 + ZONES.indexOf(zone));
  }

  /** Test host of zone {@code zone}: 1, 2, 3. */
  private static int host(String zone) {
    return 1 + ZONES.indexOf(zone);
  }

  /** Backend {@code i} (1-based) of zone {@code zone}: 198.18.0.1<zone><i>, e.g. .121 in zone-b. */
  static String backend(String zone, int i) {
    return "198.18.0.1" + host(zone) + i;
  }

  static List<String> backends(String zone) {
    List<String> out = new ArrayList<>();
    for (int i = 1; i <= BACKENDS_PER_ZONE; i++) {
      out.add(backend(zone, i));
    }
    return out;
  }

  static List<String> allBackends() {
    return ZONES.stream().flatMap(z -> backends(z).stream()).toList();
  }

  /** Network, Nodes, backends and Pods, policy and pools, then the replicas; until all settle. */
  void start() {
    ZONES.forEach(z -> network.addSource(source(z)));
    for (String zone : ZONES) {
      String node = ns + "-" + zone;
      cluster
          .admin()
          .resource(
              new NodeBuilder()
                  .withNewMetadata()
                  .withName(node)
                  .addToLabels("kubernetes.io/hostname", node)
                  .addToLabels("topology.kubernetes.io/zone", zone)
                  .endMetadata()
                  .build())
          .create();
      nodes.add(node);
      for (String ip : backends(zone)) {
        backends.addAddress(host(zone), ip);
        startBackend(ip);
        cluster.createRunningPod(ns, "web-" + ip.replace('.', '-'), "web", ip, node);
      }
    }
    HealthPolicy policy = Fixtures.policy(ns, "quorum", INTERVAL_MS + "ms", TIMEOUT_MS + "ms");
    policy.getSpec().getActive().setFastInterval(FAST_INTERVAL_MS + "ms");
    policy.getSpec().setQuorum(new Quorum());
    cluster.admin().resource(policy).create();
    addPools(FIRST_POOLS);
    String token = ProcessOperator.serviceAccountToken(cluster);
    for (String zone : ZONES) {
      replicas.put(zone, startReplica(zone, token));
    }
    replicas.values().forEach(r -> r.awaitReady(READY));
    awaitSettled();
    for (int round = 0; round < 2 && ZONES.stream().anyMatch(z -> poolsOf(z).size() < 2); round++) {
      addPools(MORE_POOLS);
      awaitSettled();
    }
    awaitAllReady(READY);
  }

  private ProcessOperator startReplica(String zone, String token) {
    return ProcessOperator.start(
        cluster,
        identity(zone),
        List.of(
            "replicaCount=3",
            "watchNamespaces={" + ns + "}",
            "leaderElection.leaseName=vigil-" + ns,
            "sharding.leaseDurationSeconds=" + LEASE_S,
            "sharding.moveRatePercent=0",
            "metrics.secure=false"),
        token,
        Map.of("VIGIL_ZONE", zone, "VIGIL_PROBE_SOURCE_ADDRESS", source(zone)));
  }

  String identity(String zone) {
    return "q" + zone.substring(zone.length() - 1) + "-" + ns;
  }

  ProcessOperator replica(String zone) {
    return replicas.get(zone);
  }

  void startBackend(String ip) {
    backends.start(ip, hostOf(ip), ip, PORT, "healthy");
  }

  private static int hostOf(String ip) {
    return ip.charAt(ip.length() - 2) - '0';
  }

  private void addPools(int n) {
    for (int i = 0; i < n; i++) {
      String name = "web-" + pools.size();
      cluster.admin().resource(Fixtures.pool(ns, name, "quorum", "web", PORT)).create();
      pools.add(name);
    }
  }

  int poolCount() {
    return pools.size();
  }

  List<BackendPool> poolObjects() {
    return cluster.admin().resources(BackendPool.class).inNamespace(ns).list().getItems();
  }

  /** The pools {@code zone}'s replica owns by status.shard. */
  List<String> poolsOf(String zone) {
    String id = identity(zone);
    return poolObjects().stream()
        .filter(p -> p.getStatus() != null && id.equals(p.getStatus().getShard()))
        .map(p -> p.getMetadata().getName())
        .sorted()
        .toList();
  }

  private void awaitSettled() {
    List<String> ids = ZONES.stream().map(this::identity).toList();
    await()
        .atMost(READY)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              List<BackendPool> all = poolObjects();
              return all.size() == pools.size() && PoolOwners.settled(all, ids);
            });
  }

  /** Pool (its Service's name) to backend address to ready, from every slice of the namespace. */
  Map<String, Map<String, Boolean>> readiness() {
    Map<String, Map<String, Boolean>> out = new TreeMap<>();
    for (EndpointSlice s :
        cluster.admin().discovery().v1().endpointSlices().inNamespace(ns).list().getItems()) {
      String pool = s.getMetadata().getLabels().get("kubernetes.io/service-name");
      Map<String, Boolean> ready = out.computeIfAbsent(pool, k -> new TreeMap<>());
      for (Endpoint e : s.getEndpoints() == null ? List.<Endpoint>of() : s.getEndpoints()) {
        boolean r = Boolean.TRUE.equals(e.getConditions().getReady());
        e.getAddresses().forEach(a -> ready.put(a, r));
      }
    }
    return out;
  }

  /**
   * Whether every pool lists every backend as ready, and its status counts every backend available
   * and no panic: a pool whose backends are all Down is in panic and publishes them ready, and
   * leaving panic as they come back Up one by one publishes the rest not ready for a moment.
   */
  boolean allReady() {
    Map<String, Map<String, Boolean>> r = readiness();
    int all = allBackends().size();
    return r.keySet().containsAll(pools)
        && pools.stream()
            .allMatch(
                p -> allBackends().stream().allMatch(ip -> Boolean.TRUE.equals(r.get(p).get(ip))))
        && poolObjects().stream()
            .allMatch(
                p ->
                    p.getStatus() != null
                        && Integer.valueOf(all).equals(p.getStatus().getAvailable())
                        && !Boolean.TRUE.equals(p.getStatus().getPanic()));
  }

  void awaitAllReady(Duration atMost) {
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> assertThat(allReady()).as("every backend ready: " + readiness()).isTrue());
  }

  /**
   * The value of gauge {@code name} ({@link #SUSPECT}, {@link #FAILING_SHARE}) on the replica's
   * /metrics; -1 when it does not answer.
   *
   * @throws AssertionError when /metrics answers without the gauge
   */
  /** The probes every replica made so far, by its own {@code vigil_probes_total}, summed. */
  double probesMade() {
    double sum = 0;
    for (String zone : replicas.keySet()) {
      try {
        Matcher m =
            Pattern.compile("(?m)^vigil_probes_total\\{[^}]*\\} ([-+0-9.eE]+)$")
                .matcher(metrics(zone).body());
        while (m.find()) {
          sum += Double.parseDouble(m.group(1));
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return sum;
  }

  private HttpResponse<String> metrics(String zone)
      throws java.io.IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + replicas.get(zone).metricsPort() + "/metrics"))
            .timeout(Duration.ofSeconds(3))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  double gauge(String zone, String name) {
    try {
      HttpResponse<String> r = metrics(zone);
      Matcher m = Pattern.compile("(?m)^" + name + "\\{[^}]*\\} ([-+0-9.eE]+)$").matcher(r.body());
      if (r.statusCode() != 200 || !m.find()) {
        throw new AssertionError(
            "/metrics of "
                + zone
                + ": status "
                + r.statusCode()
                + ", no "
                + name
                + " in: "
                + r.body().lines().filter(l -> l.contains("checker")).toList());
      }
      return Double.parseDouble(m.group(1));
    } catch (java.io.IOException e) {
      System.out.println("QUORUM-NOTE /metrics of " + zone + ": " + e);
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** Pool name to whether its status has condition {@code type} with status True. */
  Map<String, Boolean> condition(String type) {
    Map<String, Boolean> out = new HashMap<>();
    for (BackendPool p : poolObjects()) {
      boolean on =
          p.getStatus() != null
              && p.getStatus().getConditions() != null
              && p.getStatus().getConditions().stream()
                  .anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
      out.put(p.getMetadata().getName(), on);
    }
    return out;
  }

  @Override
  public void close() {
    List<String> forbidden = new ArrayList<>();
    try {
      for (ProcessOperator o : replicas.values()) {
        o.close();
      }
      backends.close();
    } finally {
      try {
        network.close();
      } finally {
        for (String node : nodes) {
          cluster.admin().nodes().withName(node).delete();
        }
        for (ProcessOperator o : replicas.values()) {
          o.forbidden().forEach(l -> forbidden.add(o.name() + ": " + l));
          o.keepLogAndDeleteFiles(Path.of("target", "e2e-logs", ns));
        }
      }
    }
    assertThat(forbidden).as("requests the chart's RBAC refused").isEmpty();
  }
}
