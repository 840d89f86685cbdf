package dev.vigil.reconcile;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.publish.PoolStatusAggregator.Problem;
import dev.vigil.publish.PublishingGuard;
import dev.vigil.publish.ServiceDesired;
import dev.vigil.publish.ServicePort;
import dev.vigil.publish.ServiceWriter;
import dev.vigil.publish.SlicePublisher;
import dev.vigil.publish.SliceTarget;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Plans a pool's publishing in a full reconcile (it writes no slice itself): checks for conflicts
 * from the informers' caches (refused, never merged), keeps the managed Service, and hands the
 * {@link SliceTarget} to the {@link SlicePublisher}, which writes the slices now and on every later
 * change of the verdict. A refused pool is held: its slices stay as they were.
 */
public final class PublishingPlanner {
  private final ServiceWriter services;
  private final SlicePublisher slices;

  public PublishingPlanner(ServiceWriter services, SlicePublisher slices) {
    this.services = services;
    this.slices = slices;
  }

  /**
   * @param foreignSlices slices of the Service that Vigil did not write (from a watch)
   * @param leftoverEndpoints an Endpoints object of the Service's name exists (from a watch)
   * @return why the pool cannot publish (it is held), or null
   */
  public Problem plan(
      PoolKey key,
      BackendPool pool,
      List<Pod> pods,
      PoolView view,
      Service service,
      List<EndpointSlice> foreignSlices,
      boolean leftoverEndpoints,
      List<BackendPool> otherPools)
      throws InterruptedException {
    String namespace = pool.getMetadata().getNamespace();
    String serviceName = PoolSources.serviceName(pool);
    boolean manage =
        pool.getSpec().getService() == null
            || !Boolean.FALSE.equals(pool.getSpec().getService().getManage());
    Optional<List<ServicePort>> ports = PoolMembers.servicePorts(pool.getSpec().getPorts(), pods);
    if (ports.isEmpty()) {
      slices.hold(key);
      return pods.isEmpty()
          ? noBackends(pool)
          : new Problem(
              Conditions.NO_BACKENDS,
              "a named spec.ports[].targetPort is declared by no selected Pod");
    }
    Optional<PublishingGuard.Refusal> refusal =
        refusal(pool, serviceName, service, manage, foreignSlices, leftoverEndpoints, otherPools);
    if (refusal.isPresent()) {
      slices.hold(key);
      return new Problem(refusal.get().reason(), refusal.get().message());
    }
    OwnerReference owner = owner(pool);
    Service desiredService =
        ServiceDesired.build(
            namespace, serviceName, pool.getMetadata().getName(), owner, ports.get());
    Service live = services.ensure(service, desiredService, manage);
    slices.plan(key, pool.getMetadata().getUid(), sliceTarget(pool, live, owner, ports.get()));
    return view.backends().isEmpty() ? noBackends(pool) : null;
  }

  /**
   * What stops the pool from publishing into the Service, if anything; a pool that claimed the
   * Service earlier is the one conflict named (its slices are not foreign to this pool's check).
   */
  private static Optional<PublishingGuard.Refusal> refusal(
      BackendPool pool,
      String serviceName,
      Service service,
      boolean manage,
      List<EndpointSlice> foreignSlices,
      boolean leftoverEndpoints,
      List<BackendPool> otherPools) {
    String claimant = earlierClaimant(pool, serviceName, otherPools);
    return PublishingGuard.check(
        serviceName,
        service,
        manage,
        claimant == null ? foreignSlices : List.of(),
        claimant == null && service != null && leftoverEndpoints,
        claimant);
  }

  /** Where and how the pool's slices are written, from the live Service. */
  private static SliceTarget sliceTarget(
      BackendPool pool, Service live, OwnerReference owner, List<ServicePort> ports) {
    return new SliceTarget(
        pool.getMetadata().getNamespace(),
        PoolSources.serviceName(pool),
        live.getMetadata().getLabels() == null ? Map.of() : live.getMetadata().getLabels(),
        "None".equals(live.getSpec().getClusterIP()),
        live.getSpec().getTrafficDistribution() != null,
        owner,
        ServiceDesired.slicePorts(ports),
        pool.getSpec().getMaxEndpointsPerSlice() == null
            ? 100
            : pool.getSpec().getMaxEndpointsPerSlice());
  }

  private static Problem noBackends(BackendPool pool) {
    if (pool.getSpec().getTargets() != null) {
      return new Problem(Conditions.NO_BACKENDS, "no entry of spec.targets has an address (yet)");
    }
    return new Problem(
        Conditions.NO_BACKENDS,
        "no Pod with an IP matches spec.selector in namespace "
            + pool.getMetadata().getNamespace());
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
}
