package dev.vigil.bench;

import dev.vigil.publish.EndpointSliceDesired;
import dev.vigil.publish.PublishedEndpoint;
import dev.vigil.publish.SliceTarget;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Bytes of the EndpointSlices Vigil publishes, as JSON on the wire, for pools of the sizes given:
 * the input of the watch fan-out figures in docs/scale.md. The slices come from the publisher's own
 * {@link EndpointSliceDesired} (one http port, zone and node per endpoint, Deployment-style Pod
 * names, explicit conditions); the metadata the API server adds (uid, resourceVersion,
 * creationTimestamp, generation, one managedFields entry) is added as the API server writes it. Not
 * a test: run it by hand.
 *
 * <pre>
 * mvn -B -q -pl operator test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
 * java -cp "$(cat /tmp/cp.txt):operator/target/classes:operator/target/test-classes" \
 *     dev.vigil.bench.SliceBytes 10 100
 * </pre>
 */
public final class SliceBytes {
  private SliceBytes() {}

  public static void main(String[] args) throws InterruptedException {
    KubernetesSerialization json = new KubernetesSerialization();
    for (String arg : args) {
      int n = Integer.parseInt(arg);
      List<EndpointSlice> slices = EndpointSliceDesired.build(target(), endpoints(n), List.of());
      long bytes = 0;
      for (EndpointSlice slice : slices) {
        serverMetadata(slice);
        String event = "{\"type\":\"MODIFIED\",\"object\":" + json.asJson(slice) + "}\n";
        bytes += event.getBytes(StandardCharsets.UTF_8).length;
      }
      System.out.printf(
          "%d endpoints: %d slice(s), %d bytes per watch event of the pool's slices, %.0f bytes per"
              + " endpoint%n",
          n, slices.size(), bytes, bytes / (double) n);
      heap(json, n, slices);
    }
  }

  /**
   * Heap per endpoint of 100,000 endpoints' slices parsed from JSON and kept, as the cache does.
   */
  private static void heap(KubernetesSerialization json, int n, List<EndpointSlice> slices)
      throws InterruptedException {
    int copies = Math.max(1, 100_000 / n);
    Map<String, EndpointSlice> cache = new java.util.HashMap<>();
    long before = Heap.used();
    for (int c = 0; c < copies; c++) {
      for (EndpointSlice slice : slices) {
        EndpointSlice parsed = json.unmarshal(json.asJson(slice), EndpointSlice.class);
        parsed.getMetadata().setName(parsed.getMetadata().getName() + "-" + c);
        cache.put(parsed.getMetadata().getName(), parsed);
      }
    }
    long after = Heap.used();
    System.out.printf(
        "  cached: %.0f bytes of heap per endpoint (%d slices)%n",
        (after - before) / (double) (copies * n), cache.size());
  }

  private static SliceTarget target() {
    return new SliceTarget(
        "shop",
        "checkout-api",
        Map.of("app.kubernetes.io/name", "checkout-api", "vigil.dev/pool", "checkout-api"),
        false,
        false,
        new OwnerReferenceBuilder()
            .withApiVersion("vigil.dev/v1alpha1")
            .withKind("BackendPool")
            .withName("checkout-api")
            .withUid(UUID.nameUUIDFromBytes(new byte[] {1}).toString())
            .withController(true)
            .withBlockOwnerDeletion(true)
            .build(),
        List.of(
            new EndpointPortBuilder().withName("http").withProtocol("TCP").withPort(8080).build()),
        100);
  }

  private static List<PublishedEndpoint> endpoints(int n) {
    List<PublishedEndpoint> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String ip = "10." + (100 + i / 65536) + "." + (i / 256 % 256) + "." + (i % 256);
      String pod = "checkout-api-7d9f8c6b5d-" + Integer.toString(1_000_000 + i * 7919, 36);
      String node = "gke-prod-pool-1-a1b2c3d4-" + Integer.toString(i % 500 + 1296, 36);
      String zone = "europe-west1-" + "bcd".charAt(i % 3);
      String uid = UUID.nameUUIDFromBytes(pod.getBytes(StandardCharsets.UTF_8)).toString();
      out.add(
          PublishedEndpoint.of(
              ip, pod, uid, node, zone, i % 10 != 0, i % 10 != 0, false, List.of()));
    }
    return out;
  }

  private static void serverMetadata(EndpointSlice slice) {
    var meta = slice.getMetadata();
    meta.setUid(UUID.nameUUIDFromBytes(meta.getName().getBytes(StandardCharsets.UTF_8)).toString());
    meta.setResourceVersion("123456789");
    meta.setGeneration(42L);
    meta.setCreationTimestamp("2026-12-01T12:00:00Z");
    meta.setManagedFields(
        List.of(
            new io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder()
                .withManager("vigil")
                .withOperation("Update")
                .withApiVersion("discovery.k8s.io/v1")
                .withTime("2026-12-01T12:00:00Z")
                .withFieldsType("FieldsV1")
                .withNewFieldsV1()
                .addToAdditionalProperties("f:addressType", Map.of())
                .addToAdditionalProperties("f:endpoints", Map.of())
                .addToAdditionalProperties(
                    "f:metadata",
                    Map.of(
                        "f:labels", Map.of(".", Map.of()),
                        "f:ownerReferences", Map.of(".", Map.of())))
                .addToAdditionalProperties("f:ports", Map.of())
                .endFieldsV1()
                .build()));
  }
}
