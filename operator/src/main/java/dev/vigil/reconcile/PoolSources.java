package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a pool reconcile observes, from informer caches: its policy, Pods, Service and its own
 * slices. Each secondary maps back to the pools it affects, so a Pod, policy or Service change
 * reconciles exactly those pools.
 */
public final class PoolSources {
  private InformerEventSource<HealthPolicy, BackendPool> policies;
  private InformerEventSource<Pod, BackendPool> pods;
  private InformerEventSource<Service, BackendPool> services;
  private InformerEventSource<EndpointSlice, BackendPool> slices;
  private IndexerResourceCache<BackendPool> pools;

  /** Makes the informer event sources; JOSDK calls this once, before start. */
  public List<EventSource<?, BackendPool>> prepare(EventSourceContext<BackendPool> context) {
    pools = context.getPrimaryCache();
    policies =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(HealthPolicy.class, BackendPool.class)
                .withName("policies")
                .withSecondaryToPrimaryMapper(
                    policy ->
                        poolsWhere(
                            policy.getMetadata().getNamespace(),
                            pool ->
                                policy
                                    .getMetadata()
                                    .getName()
                                    .equals(pool.getSpec().getPolicyRef().getName())))
                .build(),
            context);
    pods =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Pod.class, BackendPool.class)
                .withName("pods")
                .withSecondaryToPrimaryMapper(
                    pod ->
                        poolsWhere(
                            pod.getMetadata().getNamespace(),
                            pool ->
                                LabelSelectors.matches(
                                    pool.getSpec().getSelector(), pod.getMetadata().getLabels())))
                .build(),
            context);
    services =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Service.class, BackendPool.class)
                .withName("services")
                .withSecondaryToPrimaryMapper(
                    svc ->
                        poolsWhere(
                            svc.getMetadata().getNamespace(),
                            pool -> serviceName(pool).equals(svc.getMetadata().getName())))
                .build(),
            context);
    slices =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(EndpointSlice.class, BackendPool.class)
                .withName("slices")
                .withLabelSelector(
                    EndpointSliceDesired.LABEL_MANAGED_BY + "=" + EndpointSliceDesired.MANAGER)
                .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(BackendPool.class))
                .build(),
            context);
    return List.of(policies, pods, services, slices);
  }

  private Set<ResourceID> poolsWhere(
      String namespace, java.util.function.Predicate<BackendPool> test) {
    return pools
        .list(namespace)
        .filter(p -> p.getSpec() != null && test.test(p))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  /** The Service a pool publishes to: {@code spec.service.name}, or the pool's own name. */
  public static String serviceName(BackendPool pool) {
    var svc = pool.getSpec().getService();
    return svc == null || svc.getName() == null || svc.getName().isEmpty()
        ? pool.getMetadata().getName()
        : svc.getName();
  }

  Optional<HealthPolicy> policy(Context<BackendPool> context, String namespace, String name) {
    return policies.get(new ResourceID(name, namespace));
  }

  List<Pod> pods(Context<BackendPool> context, BackendPool pool) {
    return pods.list(
            pool.getMetadata().getNamespace(),
            pod ->
                LabelSelectors.matches(pool.getSpec().getSelector(), pod.getMetadata().getLabels()))
        .sorted(java.util.Comparator.comparing(p -> p.getMetadata().getName()))
        .toList();
  }

  Service service(Context<BackendPool> context, BackendPool pool) {
    return services
        .get(new ResourceID(serviceName(pool), pool.getMetadata().getNamespace()))
        .orElse(null);
  }

  /** Slices Vigil wrote for this pool (owned by it). */
  List<EndpointSlice> ownSlices(Context<BackendPool> context, BackendPool pool) {
    String uid = pool.getMetadata().getUid();
    return slices
        .list(
            pool.getMetadata().getNamespace(),
            s ->
                s.getMetadata().getOwnerReferences() != null
                    && s.getMetadata().getOwnerReferences().stream()
                        .anyMatch(o -> uid != null && uid.equals(o.getUid())))
        .toList();
  }

  /** The informer of Vigil's slices, for writers that keep it fresh. */
  public InformerEventSource<EndpointSlice, BackendPool> sliceCache() {
    return slices;
  }

  /** Other pools of the namespace, for the ServiceConflict check. */
  List<BackendPool> otherPools(Context<BackendPool> context, BackendPool pool) {
    return pools
        .list(pool.getMetadata().getNamespace())
        .filter(p -> !p.getMetadata().getName().equals(pool.getMetadata().getName()))
        .toList();
  }

  /** Zones of the Pods' nodes, from the Pods' own zone label where present. */
  Map<String, String> nodeZones(Context<BackendPool> context, List<Pod> pods) {
    Map<String, String> zones = new HashMap<>();
    for (Pod p : pods) {
      String node = p.getSpec() == null ? null : p.getSpec().getNodeName();
      String zone =
          p.getMetadata().getLabels() == null
              ? null
              : p.getMetadata().getLabels().get(PoolMembers.ZONE_LABEL);
      if (node != null && zone != null) {
        zones.putIfAbsent(node, zone);
      }
    }
    return zones;
  }
}
