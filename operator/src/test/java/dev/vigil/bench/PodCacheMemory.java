package dev.vigil.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Heap per Pod in an informer cache that keeps whole Pods ({@code full}), only what membership
 * reads ({@code reduced}), or the operator's projection ({@code projected}, what every replica's
 * Pod informer keeps since issue 31; docs/scale.md): {@code bench/pod.json} is a Deployment's Pod
 * as the API server returns it (managedFields, the projected token volume, four conditions), each
 * copy with its own name, uid and address, parsed from JSON as the watch delivers it and kept in a
 * map by namespace/name. Not a test: run it by hand, with the serial collector so the figure is
 * steady:
 *
 * <pre>
 * mvn -B -q -pl operator test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -Xmx1g -XX:+UseSerialGC -cp "$(cat /tmp/cp.txt):operator/target/test-classes" \
 *     dev.vigil.bench.PodCacheMemory 20000 [full|reduced|projected|projected-hostile]
 * </pre>
 *
 * <p>{@code projected}: the store keeps {@link dev.vigil.reconcile.PodProjection}s (JOSDK's
 * TransformingItemStore); {@code projected-hostile}: the same for Pods that each carry 256 KiB of
 * annotations (dropped before the store).
 */
public final class PodCacheMemory {
  private PodCacheMemory() {}

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    String template = template();
    KubernetesSerialization json = new KubernetesSerialization();
    String mode = args.length > 1 ? args[1] : "full";
    boolean reduced = "reduced".equals(mode);
    boolean projected = "projected".equals(mode) || "projected-hostile".equals(mode);
    boolean hostile = mode.endsWith("hostile");
    ItemStore<Pod> store =
        reduced
            ? reducedStore(json)
            : projected
                ? new io.javaoperatorsdk.operator.processing.event.source.informer
                    .TransformingItemStore<>(dev.vigil.reconcile.PodProjection::of)
                : new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
    long before = Heap.used();
    for (int i = 0; i < n; i++) {
      Pod pod = pod(template, i, json);
      if (hostile) {
        // 256 KiB of annotations and 64 KiB of managedFields, as a hostile tenant's Pods
        Map<String, String> a = new java.util.HashMap<>();
        if (pod.getMetadata().getAnnotations() != null) {
          a.putAll(pod.getMetadata().getAnnotations());
        }
        a.put("tenant.example/blob", "x".repeat(256 * 1024));
        pod.getMetadata().setAnnotations(a);
      }
      store.put(store.getKey(pod), pod);
    }
    long after = Heap.used();
    if (store.size() != n || store.get(store.getKey(pod(template, n - 1, json))) == null) {
      throw new AssertionError("the store lost Pods");
    }
    System.out.printf(
        "%d pods (%d bytes of JSON each), %s store: %.0f bytes of heap per Pod%n",
        n, template.length(), mode, (after - before) / (double) n);
  }

  /**
   * Fabric8's store that keeps only what membership reads (labels, uid, deletion timestamp, node,
   * containers, address, conditions), for comparison: the operator's Pod informer keeps {@code
   * projected} Pods (PodProjection, one store per informer: reconcile/StorePerInformer says why a
   * shared store lost Pods in ShardingE2E).
   */
  private static ItemStore<Pod> reducedStore(KubernetesSerialization json) {
    return new ReducedStateItemStore<>(
        ReducedStateItemStore.NAME_KEY_STATE,
        Pod.class,
        json,
        "metadata.labels",
        "metadata.uid",
        "metadata.deletionTimestamp",
        "spec.nodeName",
        "spec.containers",
        "status.podIP",
        "status.conditions");
  }

  /** Copy {@code i} of the template, with its own name, uid and address. */
  private static Pod pod(String template, int i, KubernetesSerialization json) {
    String id = Integer.toString(1_000_000 + i, 36);
    String ip = "10." + (100 + i / 65536) + "." + (i / 256 % 256) + "." + (i % 256);
    return json.unmarshal(
        template
            .replace("x2x7k", id)
            .replace("2f7b1e1c9d01", String.format("%012x", i))
            .replace("10.100.3.17", ip),
        Pod.class);
  }

  private static String template() throws IOException {
    try (InputStream in = PodCacheMemory.class.getResourceAsStream("/bench/pod.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
