package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The EndpointSlices of one Service as kube-proxy would read them: who is ready. */
public final class PublishedSlices {
  private final KubernetesClient admin;
  private final String namespace;
  private final String service;

  public PublishedSlices(KubernetesClient admin, String namespace, String service) {
    this.admin = admin;
    this.namespace = namespace;
    this.service = service;
  }

  public List<EndpointSlice> list() {
    return admin
        .discovery()
        .v1()
        .endpointSlices()
        .inNamespace(namespace)
        .withLabel("kubernetes.io/service-name", service)
        .list()
        .getItems();
  }

  /** Slice name to resourceVersion: unchanged means not written. */
  public Map<String, String> versions() {
    Map<String, String> out = new LinkedHashMap<>();
    list().forEach(s -> out.put(s.getMetadata().getName(), s.getMetadata().getResourceVersion()));
    return out;
  }

  public Set<String> readyIps() {
    Set<String> ready = new TreeSet<>();
    for (EndpointSlice s : list()) {
      for (Endpoint e : s.getEndpoints()) {
        if (Boolean.TRUE.equals(e.getConditions().getReady())) {
          ready.addAll(e.getAddresses());
        }
      }
    }
    return ready;
  }

  /** The addresses of test hosts {@code hostIndexes}. */
  public static Set<String> ips(int... hostIndexes) {
    Set<String> out = new TreeSet<>();
    for (int h : hostIndexes) {
      out.add(TestHosts.address(h));
    }
    return out;
  }

  /** Waits (bounded) until exactly the test hosts {@code hostIndexes} are ready. */
  public void awaitReady(Duration atMost, int... hostIndexes) {
    Set<String> want = ips(hostIndexes);
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(readyIps()).as("ready addresses").isEqualTo(want));
  }
}
