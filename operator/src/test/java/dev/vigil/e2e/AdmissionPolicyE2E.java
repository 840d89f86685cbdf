package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
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
 * The chart's ValidatingAdmissionPolicies on the real API server (v1.37, where the API is GA, so
 * {@code helm install}'s "auto" renders them): Vigil's own token may write EndpointSlices managed
 * by vigil.dev, controlled by a BackendPool, for the Service that pool names, whose endpoints are
 * Pods of the slice's namespace, and Services labelled vigil.dev/pool of type ClusterIP without
 * selector or externalIPs; it is denied every other write although its RBAC allows the verb (issue
 * 31, item 5: each forbidden write is tried). Nobody but Vigil may set or change a pool's
 * vigil.dev/shard.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdmissionPolicyE2E {
  private static final String MANAGED_BY = "endpointslice.kubernetes.io/managed-by";

  @Test
  void vigilsTokenMayWriteItsOwnSlicesAndServicesAndIsDeniedForeignOnes() {
    E2eCluster cluster = E2eCluster.withChart();
    KubernetesClient admin = cluster.admin();
    assertThat(
            admin
                .resources(ValidatingAdmissionPolicy.class)
                .withName(E2eCluster.RELEASE + "-owned-writes")
                .get())
        .as("helm install renders the policy where the API exists")
        .isNotNull();
    String ns = cluster.freshNamespace("vap");
    BackendPool pool = admin.resource(Fixtures.pool(ns, "web", "fast", "web", 8080)).create();
    OwnerReference owner =
        new OwnerReferenceBuilder()
            .withApiVersion("vigil.dev/v1alpha1")
            .withKind("BackendPool")
            .withName("web")
            .withUid(pool.getMetadata().getUid())
            .withController(true)
            .build();
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

      forbiddenSlices(vigil, ns, owner);
      forbiddenServices(vigil, ns, owner);

      EndpointSlice own =
          vigil.resource(owned(slice(ns, "web-vigil-0", "web", "vigil.dev"), owner)).create();
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

      Service mine =
          vigil
              .resource(owned(service(ns, "web", Map.of("vigil.dev/pool", "web")), owner))
              .create();
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

    shardLabel(cluster, admin, ns);

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

  /** Each slice a stolen token might use to redirect traffic, written with Vigil's token. */
  private static void forbiddenSlices(KubernetesClient vigil, String ns, OwnerReference owner) {
    assertDenied(
        () -> vigil.resource(slice(ns, "web-vigil-x", "web", "vigil.dev")).create(),
        "a slice without a BackendPool controlling it");
    assertDenied(
        () ->
            vigil.resource(owned(slice(ns, "other-vigil-0", "other", "vigil.dev"), owner)).create(),
        "a slice for a Service its pool does not name");
    assertDenied(
        () ->
            vigil
                .resource(
                    owned(slice("default", "kubernetes-vigil-0", "kubernetes", "vigil.dev"), owner))
                .create(),
        "a slice for default/kubernetes");
    EndpointSlice elsewhere = owned(slice(ns, "web-vigil-1", "web", "vigil.dev"), owner);
    elsewhere.getEndpoints().get(0).getTargetRef().setNamespace("kube-system");
    assertDenied(() -> vigil.resource(elsewhere).create(), "an endpoint of another namespace");
    EndpointSlice node = owned(slice(ns, "web-vigil-2", "web", "vigil.dev"), owner);
    node.getEndpoints().get(0).getTargetRef().setKind("Node");
    node.getEndpoints().get(0).getTargetRef().setNamespace(null);
    assertDenied(() -> vigil.resource(node).create(), "an endpoint that is not a Pod");
  }

  /** Each Service shape that would expose a pool beyond a ClusterIP, written with Vigil's token. */
  private static void forbiddenServices(KubernetesClient vigil, String ns, OwnerReference owner) {
    Map<String, String> labels = Map.of("vigil.dev/pool", "web");
    Service lb = owned(service(ns, "web-lb", labels), owner);
    lb.getSpec().setType("LoadBalancer");
    assertDenied(() -> vigil.resource(lb).create(), "a LoadBalancer Service");
    Service selector = owned(service(ns, "web-sel", labels), owner);
    selector.getSpec().setSelector(Map.of("app", "web"));
    assertDenied(() -> vigil.resource(selector).create(), "a Service with a selector");
    Service external = owned(service(ns, "web-ext", labels), owner);
    external.getSpec().setExternalIPs(java.util.List.of("203.0.113.7"));
    assertDenied(() -> vigil.resource(external).create(), "a Service with externalIPs");
    assertDenied(
        () -> vigil.resource(service(ns, "web-orphan", labels)).create(),
        "a Service without a BackendPool controlling it");
  }

  /** vigil.dev/shard: the admin (anyone but Vigil) is denied, Vigil's sharder may set it. */
  private static void shardLabel(E2eCluster cluster, KubernetesClient admin, String ns) {
    KubernetesClientException denied =
        catchThrowableOfType(
            KubernetesClientException.class,
            () ->
                admin
                    .resources(BackendPool.class)
                    .inNamespace(ns)
                    .withName("web")
                    .edit(AdmissionPolicyE2E::onShardOne));
    assertThat(denied).as("a user moving a pool by its shard label").isNotNull();
    assertThat(denied.getCode()).isEqualTo(403);
    assertThat(denied.getMessage()).contains("vigil-shard-label");
    try (KubernetesClient vigil = cluster.clientAs(E2eCluster.RELEASE_NAMESPACE, "vigil")) {
      BackendPool moved =
          vigil
              .resources(BackendPool.class)
              .inNamespace(ns)
              .withName("web")
              .edit(AdmissionPolicyE2E::onShardOne);
      assertThat(moved.getMetadata().getLabels()).containsEntry("vigil.dev/shard", "vigil-1");
    }
  }

  private static BackendPool onShardOne(BackendPool p) {
    Map<String, String> labels =
        new java.util.HashMap<>(
            p.getMetadata().getLabels() == null ? Map.of() : p.getMetadata().getLabels());
    labels.put("vigil.dev/shard", "vigil-1");
    p.getMetadata().setLabels(labels);
    return p;
  }

  private static <T extends HasMetadata> T owned(T object, OwnerReference owner) {
    object.getMetadata().setOwnerReferences(java.util.List.of(owner));
    return object;
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
    // 403 from a failed validation (reason Forbidden); 422 when vigil-slice-service finds no
    // BackendPool to use as its parameter in the slice's namespace (parameterNotFoundAction
    // Deny: the API server answers Invalid, e.g. for a slice in default/)
    assertThat(e.getCode()).as(what).isIn(403, 422);
    assertThat(e.getMessage()).as(what).contains("ValidatingAdmissionPolicy 'vigil-");
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
        .withNewTargetRef()
        .withKind("Pod")
        .withNamespace(ns)
        .withName(service + "-1")
        .endTargetRef()
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
