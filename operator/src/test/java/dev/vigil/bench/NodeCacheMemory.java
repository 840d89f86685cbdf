package dev.vigil.bench;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Heap per Node in the operator's Node cache (PoolSources: name, labels and resourceVersion in a
 * ReducedStateItemStore), for Nodes with the 16 labels of a GKE Node, parsed from JSON as the watch
 * delivers them. Not a test: run it by hand, with a small heap and the serial collector so the
 * before/after difference is steady:
 *
 * <pre>
 * mvn -B -q -pl operator dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * mvn -B -q -pl operator test-compile
 * java -Xmx512m -XX:+UseSerialGC -cp "$(cat /tmp/cp.txt):operator/target/test-classes" \
 *     dev.vigil.bench.NodeCacheMemory 10000
 * </pre>
 */
public final class NodeCacheMemory {
  private NodeCacheMemory() {}

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    KubernetesSerialization json = new KubernetesSerialization();
    ReducedStateItemStore<Node> store =
        new ReducedStateItemStore<>(
            ReducedStateItemStore.NAME_KEY_STATE, Node.class, json, "metadata.labels");
    long before = Heap.used();
    for (int i = 0; i < n; i++) {
      Node node = json.unmarshal(json.asJson(node(i)), Node.class);
      store.put(node.getMetadata().getName(), node);
    }
    long after = Heap.used();
    if (store.keySet().count() != n) {
      throw new AssertionError("the store lost Nodes");
    }
    System.out.printf("%d nodes: %.0f bytes per Node%n", n, (after - before) / (double) n);
  }

  private static Node node(int i) {
    String name = "gke-prod-pool-" + (i / 100) + "-a1b2c3d4-" + Integer.toString(i, 36);
    String zone = "europe-west1-" + "bcd".charAt(i % 3);
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("beta.kubernetes.io/arch", "amd64");
    labels.put("beta.kubernetes.io/instance-type", "e2-standard-8");
    labels.put("beta.kubernetes.io/os", "linux");
    labels.put("cloud.google.com/gke-boot-disk", "pd-balanced");
    labels.put("cloud.google.com/gke-container-runtime", "containerd");
    labels.put("cloud.google.com/gke-nodepool", "pool-" + (i / 100));
    labels.put("cloud.google.com/gke-os-distribution", "cos");
    labels.put("cloud.google.com/machine-family", "e2");
    labels.put("failure-domain.beta.kubernetes.io/region", "europe-west1");
    labels.put("failure-domain.beta.kubernetes.io/zone", zone);
    labels.put("kubernetes.io/arch", "amd64");
    labels.put("kubernetes.io/hostname", name);
    labels.put("kubernetes.io/os", "linux");
    labels.put("node.kubernetes.io/instance-type", "e2-standard-8");
    labels.put("topology.kubernetes.io/region", "europe-west1");
    labels.put("topology.kubernetes.io/zone", zone);
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid(UUID.randomUUID().toString())
        .withResourceVersion(Long.toString(100_000 + i))
        .withLabels(labels)
        .endMetadata()
        .build();
  }
}
