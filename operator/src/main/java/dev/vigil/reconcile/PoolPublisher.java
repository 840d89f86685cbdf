package dev.vigil.reconcile;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.reconcile.PoolStatusAggregator.Problem;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Publishes a pool's verdict: checks for conflicts (refused, never merged), keeps the managed
 * Service, and writes the slices that changed.
 */
public final class PoolPublisher {
  /** What publishing found: the view it published, and why it could not, if it could not. */
  public record Outcome(PoolView view, Problem problem) {}

  private final KubernetesClient client;
  private final EndpointSliceWriter slices;
  private final ServiceWriter services;
  private final WriteCounter counter;

  public PoolPublisher(
      KubernetesClient client,
      EndpointSliceWriter slices,
      ServiceWriter services,
      WriteCounter counter) {
    this.client = client;
    this.slices = slices;
    this.services = services;
    this.counter = counter;
  }

  public Outcome publish(
      Context<BackendPool> context,
      BackendPool pool,
      List<Pod> pods,
      PoolView view,
      Service service,
      List<EndpointSlice> ownSlices,
      List<BackendPool> otherPools) {
    String namespace = pool.getMetadata().getNamespace();
    String serviceName = PoolSources.serviceName(pool);
    boolean manage =
        pool.getSpec().getService() == null
            || !Boolean.FALSE.equals(pool.getSpec().getService().getManage());
    Optional<List<ServicePort>> ports = PoolMembers.servicePorts(pool.getSpec().getPorts(), pods);
    if (ports.isEmpty()) {
      return new Outcome(
          view,
          pods.isEmpty()
              ? noBackends(pool)
              : new Problem(
                  Conditions.NO_BACKENDS,
                  "a named spec.ports[].targetPort is declared by no selected Pod"));
    }
    String claimant = earlierClaimant(pool, serviceName, otherPools);
    Optional<PublishingGuard.Refusal> refusal =
        PublishingGuard.check(
            serviceName,
            service,
            manage,
            claimant == null ? foreignSlices(namespace, serviceName) : List.of(),
            claimant == null && service != null && leftoverEndpoints(namespace, serviceName),
            claimant);
    if (refusal.isPresent()) {
      return new Outcome(view, new Problem(refusal.get().reason(), refusal.get().message()));
    }
    OwnerReference owner = owner(pool);
    Service desiredService =
        ServiceDesired.build(
            namespace, serviceName, pool.getMetadata().getName(), owner, ports.get());
    Service live = services.ensure(service, desiredService, manage);
    SliceTarget target =
        new SliceTarget(
            namespace,
            serviceName,
            live.getMetadata().getLabels() == null ? Map.of() : live.getMetadata().getLabels(),
            "None".equals(live.getSpec().getClusterIP()),
            live.getSpec().getTrafficDistribution() != null,
            owner,
            ServiceDesired.slicePorts(ports.get()),
            pool.getSpec().getMaxEndpointsPerSlice() == null
                ? 100
                : pool.getSpec().getMaxEndpointsPerSlice());
    List<EndpointSlice> desired = EndpointSliceDesired.build(target, endpoints(view), ownSlices);
    EndpointSliceWriter.Writes writes = slices.apply(context, desired, ownSlices);
    counter.slices(writes.total());
    return new Outcome(view, view.backends().isEmpty() ? noBackends(pool) : null);
  }

  private static Problem noBackends(BackendPool pool) {
    return new Problem(
        Conditions.NO_BACKENDS,
        "no Pod with an IP matches spec.selector in namespace "
            + pool.getMetadata().getNamespace());
  }

  static List<PublishedEndpoint> endpoints(PoolView view) {
    List<PublishedEndpoint> out = new ArrayList<>(view.backends().size());
    for (BackendSnapshot b : view.backends()) {
      out.add(
          PublishedEndpoint.of(
              b.member().ip(),
              b.member().id(),
              b.member().podUid(),
              b.member().nodeName(),
              b.member().zone(),
              b.published(),
              b.healthy(),
              b.member().terminating()));
    }
    return out;
  }

  static OwnerReference owner(BackendPool pool) {
    return new OwnerReferenceBuilder()
        .withApiVersion(pool.getApiVersion())
        .withKind(pool.getKind())
        .withName(pool.getMetadata().getName())
        .withUid(pool.getMetadata().getUid())
        .withController(true)
        .build();
  }

  /** The name of an older pool of the namespace naming the same Service, or null. */
  static String earlierClaimant(BackendPool pool, String serviceName, List<BackendPool> others) {
    Comparator<BackendPool> age =
        Comparator.comparing(
                (BackendPool p) ->
                    p.getMetadata().getCreationTimestamp() == null
                        ? Instant.MAX
                        : Instant.parse(p.getMetadata().getCreationTimestamp()))
            .thenComparing(p -> p.getMetadata().getName());
    return others.stream()
        .filter(p -> p.getSpec() != null && serviceName.equals(PoolSources.serviceName(p)))
        .filter(p -> age.compare(p, pool) < 0)
        .min(age)
        .map(p -> p.getMetadata().getName())
        .orElse(null);
  }

  private List<EndpointSlice> foreignSlices(String namespace, String serviceName) {
    return client
        .discovery()
        .v1()
        .endpointSlices()
        .inNamespace(namespace)
        .withLabel(EndpointSliceDesired.LABEL_SERVICE_NAME, serviceName)
        .list()
        .getItems()
        .stream()
        .filter(
            s ->
                s.getMetadata().getLabels() == null
                    || !EndpointSliceDesired.MANAGER.equals(
                        s.getMetadata().getLabels().get(EndpointSliceDesired.LABEL_MANAGED_BY)))
        .toList();
  }

  private boolean leftoverEndpoints(String namespace, String serviceName) {
    return client.endpoints().inNamespace(namespace).withName(serviceName).get() != null;
  }
}
