package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.HealthPolicyStatus;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.publish.PolicyStatusAggregator;
import dev.vigil.publish.StatusWriter;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.PoolView;
import dev.vigil.shard.ShardConfig;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Reconciles a HealthPolicy: validates it (the message names the first bad field), and records the
 * aggregate of the pools that use it, coalesced like pool status.
 */
@ControllerConfiguration(name = HealthPolicyReconciler.NAME)
public final class HealthPolicyReconciler implements Reconciler<HealthPolicy> {
  public static final String NAME = "healthpolicy";

  private final PoolRuntimes runtimes;
  private final StatusWriter<HealthPolicyStatus, HealthPolicy> statusWriter;
  private final LongSupplier clock;
  private final SimpleInboundEventSource<HealthPolicy> runtimeEvents =
      new SimpleInboundEventSource<>("policy-runtime");
  private InformerEventSource<BackendPool, HealthPolicy> pools;
  private final String shard;
  private final ProbeTlsSources<HealthPolicy> tls;

  /**
   * @param shard this replica's shard identity when sharded (null: unsharded). A sharded replica
   *     runs only some of the pools: the aggregate comes from the pools' statuses (the same in
   *     every replica), not from this replica's runtimes, and only {@link #writer one replica}
   *     writes it
   */
  public HealthPolicyReconciler(
      PoolRuntimes runtimes,
      StatusWriter<HealthPolicyStatus, HealthPolicy> statusWriter,
      LongSupplier clock,
      String shard) {
    this(runtimes, statusWriter, clock, shard, new ProbeTlsSources<>(true));
  }

  /**
   * @param tls the ConfigMaps and Secrets of probe TLS, so a reference that does not resolve shows
   *     in the policy's {@code Accepted} condition
   */
  public HealthPolicyReconciler(
      PoolRuntimes runtimes,
      StatusWriter<HealthPolicyStatus, HealthPolicy> statusWriter,
      LongSupplier clock,
      String shard,
      ProbeTlsSources<HealthPolicy> tls) {
    this.tls = tls;
    this.shard = shard;
    this.runtimes = runtimes;
    this.statusWriter = statusWriter;
    this.clock = clock;
    runtimes.addListener(this::poolChanged);
  }

  private void poolChanged(PoolKey key) {
    if (pools == null) {
      return;
    }
    pools
        .get(new ResourceID(key.name(), key.namespace()))
        .ifPresent(
            pool ->
                runtimeEvents.propagateEvent(
                    new ResourceID(pool.getSpec().getPolicyRef().getName(), key.namespace())));
  }

  @Override
  public List<EventSource<?, HealthPolicy>> prepareEventSources(
      EventSourceContext<HealthPolicy> context) {
    pools =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(BackendPool.class, HealthPolicy.class)
                .withName("pools")
                .withSecondaryToPrimaryMapper(
                    pool ->
                        pool.getSpec() == null || pool.getSpec().getPolicyRef() == null
                            ? Set.of()
                            : Set.of(
                                new ResourceID(
                                    pool.getSpec().getPolicyRef().getName(),
                                    pool.getMetadata().getNamespace())))
                .build(),
            context);
    List<EventSource<?, HealthPolicy>> all =
        new java.util.ArrayList<>(List.of(pools, runtimeEvents));
    all.addAll(tls.prepare(context, HealthPolicy.class));
    return all;
  }

  @Override
  public UpdateControl<HealthPolicy> reconcile(HealthPolicy policy, Context<HealthPolicy> context)
      throws InterruptedException {
    String invalid = null;
    try {
      PolicyResolver.resolve(policy, TenantFloors.NONE, tls);
    } catch (InvalidSettingsException e) {
      invalid = e.getMessage();
    }
    List<BackendPool> using = poolsUsing(policy);
    if (shard != null && !writer(using).map(shard::equals).orElse(true)) {
      return UpdateControl.noUpdate();
    }
    HealthPolicyStatus status =
        shard != null
            ? PolicyStatusAggregator.fromPoolStatuses(
                policy.getMetadata().getGeneration(),
                invalid,
                using.stream().map(BackendPool::getStatus).toList(),
                policy.getStatus(),
                clock.getAsLong())
            : PolicyStatusAggregator.build(
                policy.getMetadata().getGeneration(),
                invalid,
                using.size(),
                views(policy.getMetadata().getNamespace(), using),
                policy.getStatus(),
                clock.getAsLong());
    Optional<Duration> later = statusWriter.write(context, policy, status);
    return later.isPresent()
        ? UpdateControl.<HealthPolicy>noUpdate().rescheduleAfter(later.get())
        : UpdateControl.noUpdate();
  }

  /**
   * Sharded, the one replica that writes a policy's status: the owner of the first of its pools by
   * name that has one. Every replica computes the same aggregate from the same pool statuses; when
   * each wrote it, all but one write of every change was refused with 409 Conflict. Empty while no
   * pool of the policy has an owner: then every replica writes, as before a pool is assigned.
   */
  static Optional<String> writer(List<BackendPool> using) {
    return using.stream()
        .filter(p -> p.getMetadata().getLabels() != null)
        .filter(p -> p.getMetadata().getLabels().get(ShardConfig.SHARD_LABEL) != null)
        .min(Comparator.comparing(p -> p.getMetadata().getName()))
        .map(p -> p.getMetadata().getLabels().get(ShardConfig.SHARD_LABEL));
  }

  /** The pools in the policy's namespace whose policyRef names it. */
  private List<BackendPool> poolsUsing(HealthPolicy policy) {
    String name = policy.getMetadata().getName();
    return pools
        .list(
            policy.getMetadata().getNamespace(),
            p ->
                p.getSpec() != null
                    && p.getSpec().getPolicyRef() != null
                    && name.equals(p.getSpec().getPolicyRef().getName()))
        .toList();
  }

  /** The views of those pools that this replica runs (unsharded: every pool). */
  private List<PoolView> views(String namespace, List<BackendPool> using) {
    return using.stream()
        .map(p -> runtimes.get(new PoolKey(namespace, p.getMetadata().getName())))
        .flatMap(Optional::stream)
        .map(PoolRuntime::view)
        .toList();
  }
}
