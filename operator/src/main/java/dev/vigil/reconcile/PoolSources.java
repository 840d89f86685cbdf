package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.publish.EndpointSliceDesired;
import dev.vigil.publish.SlicePublisher;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.ManagedInformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a pool reconcile observes, from informer caches: its policy, Pods, the zones of their Nodes,
 * its Service and its own slices. Each secondary maps back to the pools it affects, so a Pod,
 * policy, Node zone or Service change reconciles exactly those pools.
 */
@SuppressWarnings("unchecked")
public final class PoolSources {
  private InformerEventSource<HealthPolicy, BackendPool> policies;
  private InformerEventSource<Pod, BackendPool> pods;
  private InformerEventSource<Service, BackendPool> services;
  private InformerEventSource<EndpointSlice, BackendPool> slices;
  private InformerEventSource<EndpointSlice, BackendPool> foreignSlices;
  private InformerEventSource<Endpoints, BackendPool> endpoints;
  private InformerEventSource<Node, BackendPool> nodes;
  private IndexerResourceCache<BackendPool> pools;
  private ManagedInformerEventSource<BackendPool, ?, ?> primaries;

  /** A hostname target's answer changed (targets/TargetResolver): reconcile that pool. */
  private final SimpleInboundEventSource<BackendPool> targets =
      new SimpleInboundEventSource<>("targets");

  /** Makes the informer event sources; JOSDK calls this once, before start. */
  public List<EventSource<?, BackendPool>> prepare(EventSourceContext<BackendPool> context) {
    pools = context.getPrimaryCache();
    // JOSDK hands its controller event source out as the primary cache; status writes go through
    // it so the cache holds them (see PoolStatusPublisher)
    primaries =
        pools instanceof ManagedInformerEventSource<?, ?, ?> m
            ? (ManagedInformerEventSource<BackendPool, ?, ?>) m
            : null;
    policies = policySource(context);
    pods = podSource(context);
    services = serviceSource(context);
    slices = ownSliceSource(context);
    foreignSlices = foreignSliceSource(context);
    endpoints = endpointsSource(context);
    nodes = nodeZoneSource(context);
    // A pool's Pods and slices come from indexes, not from a scan of the namespace per reconcile.
    pods.addIndexers(
        Map.of(POD_LABELS, PoolSources::labelKeys, POD_NODE, PoolSources::nodeNameKey));
    slices.addIndexers(Map.of(SlicePublisher.OWNER_INDEX, SlicePublisher::ownerUids));
    return List.of(policies, pods, services, slices, foreignSlices, endpoints, nodes, targets);
  }

  /**
   * The HealthPolicies; a policy's own status writes (one per second while its pools change) must
   * not reconcile every pool that uses it: only spec changes do (generation).
   */
  private InformerEventSource<HealthPolicy, BackendPool> policySource(
      EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(HealthPolicy.class, BackendPool.class)
            .withName("policies")
            .withOnUpdateFilter(
                (now, before) ->
                    !java.util.Objects.equals(
                        now.getMetadata().getGeneration(), before.getMetadata().getGeneration()))
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
  }

  /**
   * The Pods; the cache keeps only what Vigil reads (PodProjection), one store per informer
   * (StorePerInformer: why a shared one loses Pods).
   */
  private InformerEventSource<Pod, BackendPool> podSource(EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        StorePerInformer.of(
            InformerEventSourceConfiguration.from(Pod.class, BackendPool.class)
                .withName("pods")
                .withSecondaryToPrimaryMapper(this::poolsSelecting)
                .build(),
            () -> new TransformingItemStore<>(PodProjection::of)),
        context);
  }

  /** The Services, each mapped to the pools that publish to it. */
  private InformerEventSource<Service, BackendPool> serviceSource(
      EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(Service.class, BackendPool.class)
            .withName("services")
            .withSecondaryToPrimaryMapper(
                svc ->
                    poolsWhere(
                        svc.getMetadata().getNamespace(),
                        pool -> serviceName(pool).equals(svc.getMetadata().getName())))
            .build(),
        context);
  }

  /** The slices Vigil wrote, each mapped to the pool owning it. */
  private InformerEventSource<EndpointSlice, BackendPool> ownSliceSource(
      EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(EndpointSlice.class, BackendPool.class)
            .withName("slices")
            .withLabelSelector(
                EndpointSliceDesired.LABEL_MANAGED_BY + "=" + EndpointSliceDesired.MANAGER)
            .withSecondaryToPrimaryMapper(Mappers.fromOwnerReferences(BackendPool.class))
            .build(),
        context);
  }

  /**
   * Slices with a service-name label that Vigil did not write, mapped to the pools naming that
   * Service. Conflict checks come from watches, never from a read per publish (docs/design.md §3).
   * This informer and the Endpoints one keep only name, labels and resourceVersion of each object
   * (Fabric8's ReducedStateItemStore, one per informer): the watch still carries whole objects, the
   * heap holds about 200 bytes per object.
   */
  private InformerEventSource<EndpointSlice, BackendPool> foreignSliceSource(
      EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        StorePerInformer.of(
            InformerEventSourceConfiguration.from(EndpointSlice.class, BackendPool.class)
                .withName("foreign-slices")
                .withLabelSelector(
                    EndpointSliceDesired.LABEL_SERVICE_NAME
                        + ","
                        + EndpointSliceDesired.LABEL_MANAGED_BY
                        + "!="
                        + EndpointSliceDesired.MANAGER)
                .withSecondaryToPrimaryMapper(
                    slice ->
                        poolsNamingService(
                            slice.getMetadata().getNamespace(),
                            slice.getMetadata().getLabels() == null
                                ? null
                                : slice
                                    .getMetadata()
                                    .getLabels()
                                    .get(EndpointSliceDesired.LABEL_SERVICE_NAME)))
                .build(),
            () -> reducedStore(context, EndpointSlice.class, "metadata.labels")),
        context);
  }

  /** Endpoints objects (mirrored into slices), mapped to pools naming the Service; as above. */
  private InformerEventSource<Endpoints, BackendPool> endpointsSource(
      EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        StorePerInformer.of(
            InformerEventSourceConfiguration.from(Endpoints.class, BackendPool.class)
                .withName("endpoints")
                .withSecondaryToPrimaryMapper(
                    e ->
                        poolsNamingService(
                            e.getMetadata().getNamespace(), e.getMetadata().getName()))
                .build(),
            () -> reducedStore(context, Endpoints.class)),
        context);
  }

  /** A store keeping only name, resourceVersion and {@code fields} of each object. */
  private static <R extends io.fabric8.kubernetes.api.model.HasMetadata>
      ReducedStateItemStore<R> reducedStore(
          EventSourceContext<BackendPool> context, Class<R> type, String... fields) {
    return new ReducedStateItemStore<>(
        ReducedStateItemStore.NAME_KEY_STATE,
        type,
        context.getClient().getKubernetesSerialization(),
        fields);
  }

  /**
   * The zone of every Node, as the EndpointSlice controller reads it: the Node's {@code
   * topology.kubernetes.io/zone} label (set by the cloud provider or the kubelet; a Pod carries at
   * most a copy made when it was bound, stale once the Node's zone changes). Nodes are
   * cluster-scoped, so this informer watches all of them whatever namespaces Vigil watches. The
   * watch carries whole Nodes, but the cache keeps only each Node's name, labels and
   * resourceVersion (Fabric8's ReducedStateItemStore; a field path cannot name one label, the key
   * has dots): about 2 KB of heap per Node with 16 labels, as a cloud Node has
   * (docs/publishing.md). Only a change of the zone label reconciles: the pools with a Pod on that
   * Node.
   */
  private InformerEventSource<Node, BackendPool> nodeZoneSource(
      EventSourceContext<BackendPool> context) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(Node.class, BackendPool.class)
            .withName("nodes")
            .withNamespaces(Constants.WATCH_ALL_NAMESPACE_SET)
            .withFollowControllerNamespacesChanges(false)
            .withItemStore(reducedStore(context, Node.class, "metadata.labels"))
            .withOnUpdateFilter(
                (now, before) -> !java.util.Objects.equals(zoneOf(now), zoneOf(before)))
            .withSecondaryToPrimaryMapper(this::poolsOnNode)
            .build(),
        context);
  }

  private static String zoneOf(Node node) {
    Map<String, String> labels = node.getMetadata().getLabels();
    return labels == null ? null : labels.get(PoolMembers.ZONE_LABEL);
  }

  /** The pools selecting a Pod on this Node (from the Pods' node index). */
  private Set<ResourceID> poolsOnNode(Node node) {
    Set<ResourceID> out = new java.util.HashSet<>();
    for (Pod pod : pods.byIndex(POD_NODE, node.getMetadata().getName())) {
      out.addAll(poolsSelecting(pod));
    }
    return out;
  }

  /** The pools whose selector matches this Pod's labels. */
  private Set<ResourceID> poolsSelecting(Pod pod) {
    return poolsWhere(
        pod.getMetadata().getNamespace(),
        pool ->
            LabelSelectors.matches(pool.getSpec().getSelector(), pod.getMetadata().getLabels()));
  }

  private Set<ResourceID> poolsWhere(
      String namespace, java.util.function.Predicate<BackendPool> test) {
    return pools
        .list(namespace)
        .filter(p -> p.getSpec() != null && test.test(p))
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  private Set<ResourceID> poolsNamingService(String namespace, String service) {
    return service == null
        ? Set.of()
        : poolsWhere(namespace, pool -> service.equals(serviceName(pool)));
  }

  /**
   * The addresses of a pool's hostname target changed, or it started or stopped resolving (called
   * on the resolver's thread): the pool reconciles, off that thread.
   */
  public void targetsChanged(dev.vigil.runtime.PoolKey key) {
    targets.propagateEvent(new ResourceID(key.name(), key.namespace()));
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
    String namespace = pool.getMetadata().getNamespace();
    var selector = pool.getSpec().getSelector();
    java.util.function.Predicate<Pod> selected =
        pod -> LabelSelectors.matches(selector, pod.getMetadata().getLabels());
    java.util.stream.Stream<Pod> candidates;
    if (selector != null
        && selector.getMatchLabels() != null
        && !selector.getMatchLabels().isEmpty()) {
      // the Pods carrying one of the selector's labels, from the index; the rest is a filter
      Map.Entry<String, String> one = selector.getMatchLabels().entrySet().iterator().next();
      candidates =
          pods.byIndex(POD_LABELS, labelKey(namespace, one.getKey(), one.getValue())).stream();
    } else {
      candidates = pods.list(namespace, p -> true);
    }
    return candidates
        .filter(selected)
        .sorted(java.util.Comparator.comparing(p -> p.getMetadata().getName()))
        .toList();
  }

  private static final String POD_LABELS = "vigil.dev/pod-labels";
  private static final String POD_NODE = "vigil.dev/pod-node";

  private static List<String> nodeNameKey(Pod pod) {
    String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    return node == null ? List.of() : List.of(node);
  }

  private static List<String> labelKeys(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels == null) {
      return List.of();
    }
    List<String> keys = new java.util.ArrayList<>(labels.size());
    labels.forEach((k, v) -> keys.add(labelKey(pod.getMetadata().getNamespace(), k, v)));
    return keys;
  }

  private static String labelKey(String namespace, String key, String value) {
    return namespace + "/" + key + "=" + value;
  }

  Service service(Context<BackendPool> context, BackendPool pool) {
    return services
        .get(new ResourceID(serviceName(pool), pool.getMetadata().getNamespace()))
        .orElse(null);
  }

  /** Slices Vigil wrote for this pool (owned by it). */
  List<EndpointSlice> ownSlices(Context<BackendPool> context, BackendPool pool) {
    String uid = pool.getMetadata().getUid();
    return uid == null ? List.of() : slices.byIndex(SlicePublisher.OWNER_INDEX, uid);
  }

  /** Slices with this Service's name label that Vigil did not write (name and labels only). */
  List<EndpointSlice> foreignSlices(String namespace, String serviceName) {
    return foreignSlices
        .list(
            namespace,
            s ->
                s.getMetadata().getLabels() != null
                    && serviceName.equals(
                        s.getMetadata().getLabels().get(EndpointSliceDesired.LABEL_SERVICE_NAME)))
        .sorted(java.util.Comparator.comparing(s -> s.getMetadata().getName()))
        .toList();
  }

  /** An Endpoints object of the Service's name exists. */
  boolean leftoverEndpoints(String namespace, String serviceName) {
    return endpoints.get(new ResourceID(serviceName, namespace)).isPresent();
  }

  /** JOSDK's cache of BackendPools, for the status writer; null before JOSDK prepared sources. */
  public ManagedInformerEventSource<BackendPool, ?, ?> primaries() {
    return primaries;
  }

  /**
   * The UID of a cached BackendPool, for the Events about it ({@code kubectl describe} lists only
   * Events whose involvedObject carries the object's UID); empty before JOSDK prepared sources or
   * when the pool is not cached.
   */
  public java.util.Optional<String> poolUid(String namespace, String name) {
    var cache = primaries;
    return cache == null
        ? java.util.Optional.empty()
        : cache.get(new ResourceID(name, namespace)).map(p -> p.getMetadata().getUid());
  }

  /** The Service informer, for the writer that keeps it fresh. */
  public InformerEventSource<Service, BackendPool> serviceCache() {
    return services;
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

  /** Zones of the Pods' Nodes, from the Nodes' zone label (the Node informer's cache). */
  Map<String, String> nodeZones(Context<BackendPool> context, List<Pod> pods) {
    Map<String, String> zones = new HashMap<>();
    for (Pod p : pods) {
      String node = p.getSpec() == null ? null : p.getSpec().getNodeName();
      if (node == null || zones.containsKey(node)) {
        continue;
      }
      nodes
          .get(new ResourceID(node))
          .map(PoolSources::zoneOf)
          .ifPresent(zone -> zones.put(node, zone));
    }
    return zones;
  }
}
