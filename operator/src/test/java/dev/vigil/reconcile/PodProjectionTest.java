package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.PoolPort;
import io.fabric8.kubernetes.api.model.FieldsV1;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Pod projection (issue 31, item 4): membership reads the same from it as from the whole Pod,
 * and its size is small and flat in the size of the Pod's annotations and managedFields.
 */
class PodProjectionTest {
  private static final KubernetesSerialization JSON = new KubernetesSerialization();
  private static final List<PoolPort> NAMED =
      List.of(new PoolPort("http", 80, new IntOrString("http")));
  private static final Map<String, String> ZONES =
      Map.of("gke-prod-pool-1-a1b2c3d4-x7k2", "europe-west1-b");

  /** Bytes of JSON of a projected Pod at most: the 2 KB per Pod target of the issue. */
  private static final int MAX_PROJECTED_BYTES = 2_048;

  @Test
  void membershipReadsTheSameFromTheProjectionAsFromTheWholePod() throws Exception {
    Pod full = template();
    full.getMetadata().setDeletionTimestamp("2026-12-01T12:00:00Z");
    Pod projected = PodProjection.of(full);
    assertThat(PoolMembers.members(List.of(projected), NAMED, null, true, ZONES))
        .isEqualTo(PoolMembers.members(List.of(full), NAMED, null, true, ZONES))
        .singleElement()
        .satisfies(m -> assertThat(m.probePort()).isEqualTo(8080));
    assertThat(PoolMembers.ready(projected)).isEqualTo(PoolMembers.ready(full)).isTrue();
    assertThat(projected.getMetadata().getLabels()).isEqualTo(full.getMetadata().getLabels());
    assertThat(projected.getMetadata().getResourceVersion())
        .isEqualTo(full.getMetadata().getResourceVersion());
    assertThat(projected.getStatus().getPhase()).isEqualTo(full.getStatus().getPhase());
    assertThat(projected.getSpec().getRestartPolicy()).isEqualTo(full.getSpec().getRestartPolicy());
  }

  @Test
  void aNotReadyPodStaysNotReadyAndOnlyContainersWithPortsAreKept() throws Exception {
    Pod full = template();
    full.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .forEach(c -> c.setStatus("False"));
    full.getSpec()
        .getContainers()
        .add(new io.fabric8.kubernetes.api.model.ContainerBuilder().withName("sidecar").build());
    Pod projected = PodProjection.of(full);
    assertThat(PoolMembers.ready(projected)).isFalse();
    assertThat(PoolMembers.members(List.of(projected), NAMED, null, true, ZONES))
        .isEqualTo(PoolMembers.members(List.of(full), NAMED, null, true, ZONES));
    assertThat(projected.getSpec().getContainers())
        .extracting(io.fabric8.kubernetes.api.model.Container::getName)
        .doesNotContain("sidecar");
    full.getStatus().setConditions(List.of());
    assertThat(PoolMembers.ready(PodProjection.of(full))).isFalse();
  }

  @Test
  void aProjectedPodIsSmallAndFlatInItsAnnotationsAndManagedFields() throws Exception {
    Pod plain = template();
    Pod hostile = bloated(template(), 256 * 1024, 64 * 1024);
    int plainBytes = JSON.asJson(plain).length();
    int hostileBytes = JSON.asJson(hostile).length();
    int projectedPlain = JSON.asJson(PodProjection.of(plain)).length();
    int projectedHostile = JSON.asJson(PodProjection.of(hostile)).length();
    System.out.printf(
        "Pod JSON bytes: plain %d -> projected %d; 256 KiB annotations + managedFields %d ->"
            + " projected %d%n",
        plainBytes, projectedPlain, hostileBytes, projectedHostile);
    assertThat(hostileBytes).isGreaterThan(320 * 1024);
    assertThat(projectedHostile)
        .as("flat in annotations and managedFields")
        .isEqualTo(projectedPlain);
    assertThat(projectedPlain).isLessThanOrEqualTo(MAX_PROJECTED_BYTES);
  }

  private static Pod template() throws Exception {
    try (InputStream in = PodProjectionTest.class.getResourceAsStream("/bench/pod.json")) {
      return JSON.unmarshal(new String(in.readAllBytes(), StandardCharsets.UTF_8), Pod.class);
    }
  }

  /** The Pod with {@code annotationBytes} of annotations and managedFields of about that size. */
  static Pod bloated(Pod pod, int annotationBytes, int managedFieldBytes) {
    Map<String, String> annotations =
        new HashMap<>(
            pod.getMetadata().getAnnotations() == null
                ? Map.of()
                : pod.getMetadata().getAnnotations());
    annotations.put("tenant.example/blob", "x".repeat(annotationBytes));
    pod.getMetadata().setAnnotations(annotations);
    Map<String, Object> fields = new HashMap<>();
    for (int i = 0; fields.size() * 32 < managedFieldBytes; i++) {
      fields.put("f:tenant.example/field-" + i, Map.of());
    }
    List<io.fabric8.kubernetes.api.model.ManagedFieldsEntry> managed =
        new ArrayList<>(
            pod.getMetadata().getManagedFields() == null
                ? List.of()
                : pod.getMetadata().getManagedFields());
    FieldsV1 v1 = new FieldsV1();
    v1.setAdditionalProperty("f:metadata", Map.of("f:annotations", fields));
    managed.add(
        new ManagedFieldsEntryBuilder()
            .withManager("tenant")
            .withOperation("Apply")
            .withFieldsV1(v1)
            .build());
    pod.getMetadata().setManagedFields(managed);
    return pod;
  }
}
