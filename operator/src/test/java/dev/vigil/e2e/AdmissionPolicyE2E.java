package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The chart's ValidatingAdmissionPolicy on the real API server (v1.37, where the API is GA, so
 * {@code helm install}'s "auto" renders it): Vigil's own token may write EndpointSlices managed by
 * vigil.dev and Services labelled vigil.dev/pool, and is denied when it tries to change, delete or
 * create anyone else's, although its RBAC allows the verb; other users are not affected.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdmissionPolicyE2E {
  private static final String MANAGED_BY = "endpointslice.kubernetes.io/managed-by";

  @Test
  void vigilsTokenMayWriteItsOwnSlicesAndServicesAndIsDeniedForeignOnes() {
    E2eCluster cluster = E2eCluster.get();
    cluster.installChart();
    KubernetesClient admin = cluster.admin();
    assertThat(
            admin
                .resources(ValidatingAdmissionPolicy.class)
                .withName(E2eCluster.RELEASE + "-owned-writes")
                .get())
        .as("helm install renders the policy where the API exists")
        .isNotNull();
    String ns = cluster.freshNamespace("vap");
    EndpointSlice foreign =
        admin.resource(slice(ns, "other-abc", "other", "endpointslice-controller.k8s.io")).create();
    admin.resource(service(ns, "other", Map.of("app", "other"))).create();

    try (KubernetesClient vigil = cluster.clientAs(E2eCluster.RELEASE_NAMESPACE, "vigil")) {
      // The policy is compiled a moment after it is created: wait for the first denial.
      KubernetesClientException denied =
          await()
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(500))
              .until(
                  () ->
                      catchThrowableOfType(
                          KubernetesClientException.class,
                          () -> vigil.resource(notReady(admin.resource(foreign).get())).update()),
                  e -> e != null && e.getCode() != 409);
      assertThat(denied.getCode()).isEqualTo(403);
      assertThat(denied.getMessage())
          .contains("vigil-owned-writes")
          .contains("may only write EndpointSlices labelled " + MANAGED_BY + "=vigil.dev");

      assertDenied(() -> vigil.resource(foreign).delete(), "deleting another controller's slice");
      assertDenied(
          () -> vigil.resource(slice(ns, "sneaky", "other", "someone-else")).create(),
          "creating a slice managed by someone else");
      assertDenied(
          () ->
              vigil
                  .services()
                  .inNamespace(ns)
                  .withName("other")
                  .edit(
                      s -> {
                        s.getSpec().getPorts().get(0).setPort(81);
                        return s;
                      }),
          "changing a Service Vigil does not own");

      EndpointSlice own = vigil.resource(slice(ns, "web-vigil-0", "web", "vigil.dev")).create();
      EndpointSlice updated = vigil.resource(notReady(own)).update();
      assertThat(updated.getEndpoints().get(0).getConditions().getReady()).isFalse();
      EndpointSlice givenAway =
          new EndpointSliceBuilder(updated)
              .editMetadata()
              .addToLabels(MANAGED_BY, "endpointslice-controller.k8s.io")
              .endMetadata()
              .build();
      assertDenied(() -> vigil.resource(givenAway).update(), "giving its own slice away");
      assertThat(vigil.resource(own).delete()).isNotEmpty();

      Service mine = vigil.resource(service(ns, "web", Map.of("vigil.dev/pool", "web"))).create();
      assertThat(
              vigil
                  .services()
                  .inNamespace(ns)
                  .withName(mine.getMetadata().getName())
                  .edit(
                      s -> {
                        s.getSpec().getPorts().get(0).setPort(81);
                        return s;
                      })
                  .getSpec()
                  .getPorts()
                  .get(0)
                  .getPort())
          .isEqualTo(81);
    }

    // Other users are not matched: the admin still changes the foreign slice.
    EndpointSlice byAdmin =
        admin
            .discovery()
            .v1()
            .endpointSlices()
            .inNamespace(ns)
            .withName("other-abc")
            .edit(
                s -> {
                  s.getEndpoints().get(0).getConditions().setReady(false);
                  return s;
                });
    assertThat(byAdmin.getEndpoints().get(0).getConditions().getReady()).isFalse();
  }

  /** A copy of the slice with its first endpoint not ready (an update Vigil would make). */
  private static EndpointSlice notReady(EndpointSlice slice) {
    EndpointSlice copy = new EndpointSliceBuilder(slice).build();
    copy.getEndpoints().get(0).getConditions().setReady(false);
    return copy;
  }

  private static void assertDenied(Runnable call, String what) {
    KubernetesClientException e = catchThrowableOfType(KubernetesClientException.class, call::run);
    assertThat(e).as(what + " must be denied").isNotNull();
    assertThat(e.getCode()).as(what).isEqualTo(403);
    assertThat(e.getMessage()).as(what).contains("vigil-owned-writes");
  }

  private static EndpointSlice slice(String ns, String name, String service, String managedBy) {
    return new EndpointSliceBuilder()
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .withLabels(Map.of("kubernetes.io/service-name", service, MANAGED_BY, managedBy))
        .endMetadata()
        .withAddressType("IPv4")
        .addNewEndpoint()
        .withAddresses(TestHosts.address(1))
        .withNewConditions()
        .withReady(true)
        .withServing(true)
        .withTerminating(false)
        .endConditions()
        .endEndpoint()
        .addNewPort()
        .withName("http")
        .withPort(8080)
        .withProtocol("TCP")
        .endPort()
        .build();
  }

  private static Service service(String ns, String name, Map<String, String> labels) {
    return new ServiceBuilder()
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .withLabels(labels)
        .endMetadata()
        .withNewSpec()
        .addNewPort()
        .withName("http")
        .withPort(80)
        .withProtocol("TCP")
        .endPort()
        .endSpec()
        .build();
  }
}
