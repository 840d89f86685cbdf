package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.ServiceRef;
import dev.vigil.e2e.TestHosts.Mode;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZone;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Topology-aware routing on the real API server: zones come from the Nodes' {@code
 * topology.kubernetes.io/zone} label (a Pod carries at most a copy made when it was bound, see
 * below), read through the chart's RBAC ({@code nodes} get/list/watch); a Service with {@code
 * trafficDistribution: PreferClose} gets {@code hints.forZones} only while every ready endpoint has
 * a zone (kube-proxy's rule); a Node's zone change re-plans the pool's slices. There is no kubelet:
 * the test creates the Node objects itself and sets each Pod's {@code spec.nodeName}.
 *
 * <p>Kubernetes 1.37's {@code PodTopologyLabels} admission copies the Node's zone label onto a Pod
 * when it is bound (here: created with a nodeName), but never again: a Pod made while its Node had
 * no zone, or whose Node's zone changed, keeps the old label. The last two steps fail when zones
 * are read from Pod labels (seen: {@code 198.18.0.13="-/-"} where {@code zone-c/zone-c} was due).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZonesE2E {
  private static final int PORT = 8080;
  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static E2eCluster cluster;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "zones", PORT);
  private final String ns = bed.ns();
  private final TestHosts hosts = bed.hosts();
  private final PublishedSlices slices = bed.slices();
  private InProcessOperator operator;
  private final List<String> nodes = new ArrayList<>();

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.withChart();
  }

  /** The test's Nodes go after the operator and hosts have stopped. */
  @AfterEach
  void tearDown() {
    try {
      bed.close();
    } finally {
      for (String node : nodes) {
        cluster.admin().nodes().withName(node).delete();
      }
    }
  }

  @Test
  void zonesComeFromNodesAndHintsFollowKubeProxysRule() {
    KubernetesClient admin = cluster.admin();
    String nodeA = node("a", "zone-a");
    String nodeB = node("b", "zone-b");
    String nodeC = node("c", null);
    admin.resource(Fixtures.policy(ns, "fast", "500ms", "300ms")).create();
    admin
        .resource(
            new ServiceBuilder()
                .withNewMetadata()
                .withName("web")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withTrafficDistribution("PreferClose")
                .addNewPort()
                .withName("http")
                .withPort(80)
                .withTargetPort(new IntOrString(PORT))
                .withProtocol("TCP")
                .endPort()
                .endSpec()
                .build())
        .create();
    String[] nodeOf = {null, nodeA, nodeB, nodeC};
    for (int h = 1; h <= 3; h++) {
      hosts.start(h);
      createRunningPod("web-" + h, TestHosts.address(h), nodeOf[h]);
    }
    BackendPool pool = Fixtures.pool(ns, "web", "fast", "web", PORT);
    ServiceRef service = new ServiceRef();
    service.setName("web");
    service.setManage(false);
    pool.getSpec().setService(service);
    admin.resource(pool).create();

    operator = bed.started(InProcessOperator.start(cluster, ns, null));
    slices.awaitReady(CONVERGE, 1, 2, 3);
    // web-3's Node has no zone and web-3 is ready: no endpoint gets a hint
    awaitEndpoints(
        Map.of(
            TestHosts.address(1), "zone-a/-",
            TestHosts.address(2), "zone-b/-",
            TestHosts.address(3), "-/-"));

    // web-3 not ready: every ready endpoint has a zone, so hints are written
    hosts.set(3, Mode.REFUSE);
    slices.awaitReady(CONVERGE, 1, 2);
    awaitEndpoints(
        Map.of(
            TestHosts.address(1), "zone-a/zone-a",
            TestHosts.address(2), "zone-b/zone-b",
            TestHosts.address(3), "-/-"));

    // a Node gains a zone: its Pods' endpoints follow without any Pod change
    admin.nodes().withName(nodeC).edit(n -> label(n, "zone-c"));
    awaitEndpoints(
        Map.of(
            TestHosts.address(1), "zone-a/zone-a",
            TestHosts.address(2), "zone-b/zone-b",
            TestHosts.address(3), "zone-c/zone-c"));

    // and a Node's zone changes
    admin.nodes().withName(nodeA).edit(n -> label(n, "zone-x"));
    hosts.set(3, Mode.HEALTHY);
    slices.awaitReady(CONVERGE, 1, 2, 3);
    awaitEndpoints(
        Map.of(
            TestHosts.address(1), "zone-x/zone-x",
            TestHosts.address(2), "zone-b/zone-b",
            TestHosts.address(3), "zone-c/zone-c"));
    for (EndpointSlice s : slices.list()) {
      for (Endpoint e : s.getEndpoints()) {
        assertThat(e.getNodeName()).isEqualTo(nodeOf[host(e.getAddresses().get(0))]);
      }
    }
  }

  private static int host(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf('.') + 1)) - 10;
  }

  private static Node label(Node n, String zone) {
    n.getMetadata().getLabels().put(ZONE, zone);
    return n;
  }

  /** A Node object (no kubelet stands behind it), with a zone label unless zone is null. */
  private String node(String suffix, String zone) {
    String name = ns + "-" + suffix;
    NodeBuilder b =
        new NodeBuilder()
            .withNewMetadata()
            .withName(name)
            .addToLabels("kubernetes.io/hostname", name)
            .endMetadata();
    if (zone != null) {
      b.editMetadata().addToLabels(ZONE, zone).endMetadata();
    }
    cluster.admin().resource(b.build()).create();
    nodes.add(name);
    return name;
  }

  private void createRunningPod(String name, String ip, String node) {
    cluster.createRunningPod(ns, name, "web", ip, node);
  }

  /** Waits until each address shows {@code zone/hint} ({@code -} for none). */
  private void awaitEndpoints(Map<String, String> want) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(endpoints()).isEqualTo(new TreeMap<>(want)));
  }

  private Map<String, String> endpoints() {
    Map<String, String> out = new TreeMap<>();
    for (EndpointSlice s : slices.list()) {
      for (Endpoint e : s.getEndpoints()) {
        List<ForZone> hints = e.getHints() == null ? null : e.getHints().getForZones();
        String hint =
            hints == null || hints.isEmpty()
                ? "-"
                : String.join(",", hints.stream().map(ForZone::getName).toList());
        out.put(e.getAddresses().get(0), (e.getZone() == null ? "-" : e.getZone()) + "/" + hint);
      }
    }
    return out;
  }
}
