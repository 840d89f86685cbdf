package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.demo.DemoBackend;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Issue 31 item 4: the reduced caches must not lose objects when Vigil watches several namespaces.
 * JOSDK runs one informer per watched namespace; a store shared between them (one {@code
 * withItemStore} instance) kept only the namespace that synced last, which is why commit 04f0603's
 * reduced Pod store made replicas started while pools existed publish empty slices. The real
 * operator starts after Pods, pools and a foreign slice exist in two namespaces (a restarted
 * replica's view): every pool of both namespaces publishes both of its Pods, and both foreign
 * slices are seen. Fails with the store shared (StorePerInformer bypassed). And a pool outside
 * {@code --namespaces} gets neither status nor slices (fails when the controllers watch every
 * namespace, ReconcileWiring's {@code watching} bypassed).
 */
class NamespaceCachesIT {
  private static final List<String> NAMESPACES = List.of("team-a", "team-b");

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final int port = cluster.port();

  @Test
  void aReplicaStartedWhilePoolsExistSeesEveryWatchedNamespacesPodsAndForeignSlices() {
    Map<String, Set<String>> want = new TreeMap<>();
    int host = 20;
    for (String ns : NAMESPACES) {
      client.resource(Fixtures.policy(ns, "fast", "200ms", "150ms")).create();
      Set<String> ips = new TreeSet<>();
      for (int i = 0; i < 2; i++) {
        DemoBackend b = cluster.backend("127.0.0." + host++);
        client.resource(Fixtures.pod(ns, "web-" + i, "web", b.host())).create();
        ips.add(b.host());
      }
      want.put(ns, ips);
      client.resource(Fixtures.pool(ns, "web", "fast", "web", port)).create();
      client.resource(Fixtures.pool(ns, "legacy", "fast", "legacy", port)).create();
      client.resource(foreignSlice(ns, "legacy")).create();
    }

    startOperator();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              for (String ns : NAMESPACES) {
                assertThat(readyIps(ns))
                    .as("ready addresses in %s's slices", ns)
                    .isEqualTo(want.get(ns));
                assertThat(readyReason(ns, "legacy"))
                    .as("%s/legacy, whose Service has a slice Vigil did not write", ns)
                    .isEqualTo("ForeignEndpointSlices");
              }
            });
  }

  @Test
  void aPoolOutsideTheWatchedNamespacesIsLeftAlone() {
    DemoBackend b = cluster.backend("127.0.0.30");
    for (String ns : List.of("team-a", "elsewhere")) {
      client.resource(Fixtures.policy(ns, "fast", "200ms", "150ms")).create();
      client.resource(Fixtures.pod(ns, "web-0", "web", b.host())).create();
      client.resource(Fixtures.pool(ns, "web", "fast", "web", port)).create();
    }

    cluster.operator(MockCluster.config("team-a"));
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(readyIps("team-a")).containsExactly(b.host()));
    // by now the watched pool was reconciled and published; an unwatched one would have been too
    assertThat(client.resources(BackendPool.class).inNamespace("elsewhere").withName("web").get())
        .extracting(BackendPool::getStatus)
        .as("status of elsewhere/web, outside --namespaces")
        .isNull();
    assertThat(readyIps("elsewhere")).as("slices in elsewhere").isEmpty();
  }

  private void startOperator() {
    cluster.operator(MockCluster.config(String.join(",", NAMESPACES)));
  }

  private static EndpointSlice foreignSlice(String ns, String service) {
    return new EndpointSliceBuilder()
        .withNewMetadata()
        .withName(service + "-by-hand")
        .withNamespace(ns)
        .addToLabels("kubernetes.io/service-name", service)
        .addToLabels("endpointslice.kubernetes.io/managed-by", "someone-else")
        .endMetadata()
        .withAddressType("IPv4")
        .build();
  }

  /** Ready addresses in the slices Vigil wrote for Service {@code web}. */
  private Set<String> readyIps(String ns) {
    Set<String> out = new TreeSet<>();
    for (EndpointSlice s :
        client
            .discovery()
            .v1()
            .endpointSlices()
            .inNamespace(ns)
            .withLabel("kubernetes.io/service-name", "web")
            .withLabel("endpointslice.kubernetes.io/managed-by", "vigil.dev")
            .list()
            .getItems()) {
      for (Endpoint e : s.getEndpoints() == null ? List.<Endpoint>of() : s.getEndpoints()) {
        if (Boolean.TRUE.equals(e.getConditions().getReady())) {
          out.addAll(e.getAddresses());
        }
      }
    }
    return out;
  }

  private String readyReason(String ns, String pool) {
    BackendPool p = client.resources(BackendPool.class).inNamespace(ns).withName(pool).get();
    if (p == null || p.getStatus() == null || p.getStatus().getConditions() == null) {
      return null;
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .map(Condition::getReason)
        .findFirst()
        .orElse(null);
  }
}
