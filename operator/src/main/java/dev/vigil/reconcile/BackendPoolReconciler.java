package dev.vigil.reconcile;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.publish.ApiErrors;
import dev.vigil.publish.PoolStatusAggregator.Problem;
import dev.vigil.publish.PoolStatusPublisher;
import dev.vigil.publish.SlicePublisher;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.shard.PoolHandoff;
import dev.vigil.targets.TargetResolver;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Reconciles a BackendPool on spec, policy, Pod, Service and slice changes: observe (from informer
 * caches), validate, keep the runtime in step, plan publishing ({@link PublishingPlanner}) and hand
 * what it found to the status publisher. A change of the verdict alone never comes here: the
 * runtime's change event goes straight to the {@link dev.vigil.publish.SlicePublisher} and the
 * {@link PoolStatusPublisher} (docs/design.md §3, §6; docs/publishing.md walks the hops).
 */
@ControllerConfiguration(name = BackendPoolReconciler.NAME, triggerReconcilerOnAllEvents = true)
public final class BackendPoolReconciler implements Reconciler<BackendPool> {
  public static final String NAME = "backendpool";
  private static final long WAIT_SECONDS = 30;

  /** While a pool waits for its handover: how often to look again (status events also wake it). */
  private static final long HANDOVER_POLL_MS = 500;

  private final PoolRuntimes runtimes;
  private final PoolSources sources;
  private final PublishingPlanner publishing;
  private final PoolStatusPublisher status;
  private final SlicePublisher slices;
  private final LongSupplier clock;
  private final PoolHandoff handoff;
  private final TenantFloors floors;
  private final ProbeTlsSources<BackendPool> tls;
  private final TargetResolver targets;

  /**
   * @param handoff with sharding on: hands a pool that moved away over to its next owner and waits
   *     for the handover of one that moved here; null: sharding off
   * @param floors the admin's floors every pool's policy is raised to ({@code --min-interval},
   *     {@code --default-damping})
   * @param targets resolves the hostnames of pools with {@code spec.targets}
   */
  public BackendPoolReconciler(
      PoolRuntimes runtimes,
      PoolSources sources,
      PublishingPlanner publishing,
      PoolStatusPublisher status,
      SlicePublisher slices,
      LongSupplier clock,
      PoolHandoff handoff,
      TenantFloors floors,
      TargetResolver targets) {
    this.floors = floors;
    this.tls = new ProbeTlsSources<>(floors.probeTlsSecrets());
    this.targets = targets;
    this.handoff = handoff;
    this.runtimes = runtimes;
    this.sources = sources;
    this.publishing = publishing;
    this.status = status;
    this.slices = slices;
    this.clock = clock;
  }

  @Override
  public List<EventSource<?, BackendPool>> prepareEventSources(
      EventSourceContext<BackendPool> context) {
    List<EventSource<?, BackendPool>> all = new java.util.ArrayList<>(sources.prepare(context));
    all.addAll(tls.prepare(context, BackendPool.class));
    return all;
  }

  @Override
  public UpdateControl<BackendPool> reconcile(BackendPool pool, Context<BackendPool> context)
      throws Exception {
    PoolKey key = new PoolKey(pool.getMetadata().getNamespace(), pool.getMetadata().getName());
    if (context.isPrimaryResourceDeleted()) {
      deleted(key);
      return UpdateControl.noUpdate();
    }
    if (handoff != null && !handoff.mayRun()) {
      // sharded, without a held shard Lease (not yet taken, or lost): run nothing, write nothing
      return UpdateControl.<BackendPool>noUpdate().rescheduleAfter(1, TimeUnit.SECONDS);
    }
    if (handoff != null && !runtimes.contains(key) && handoff.awaitedOwner(pool) != null) {
      // moved here from a shard that has not handed it over yet: start from its handover status
      return UpdateControl.<BackendPool>noUpdate()
          .rescheduleAfter(HANDOVER_POLL_MS, TimeUnit.MILLISECONDS);
    }
    String policyName = pool.getSpec().getPolicyRef().getName();
    TargetResolver.Resolution names = resolveTargets(pool, key);
    Problem problem = runOrHold(pool, context, key, policyName, names);
    status.observed(
        key,
        new PoolStatusPublisher.Observed(
            pool.getMetadata().getGeneration(),
            policyName,
            problem,
            names == null ? null : unresolved(names)));
    if (names == null || names.names().isEmpty()) {
      return UpdateControl.noUpdate();
    }
    // look again when a name is due (its TTL, a retry, or the end of a kept answer); an answer
    // that changes something asks for a reconcile sooner (PoolSources.targetsChanged)
    long wait = Math.max(TargetResolver.BUSY_RETRY_MS, names.nextAt() - clock.getAsLong());
    return UpdateControl.<BackendPool>noUpdate().rescheduleAfter(wait, TimeUnit.MILLISECONDS);
  }

  /** What status says about the hostnames: failing ones, and answers in refused networks. */
  private List<String> unresolved(TargetResolver.Resolution names) {
    List<String> out = new java.util.ArrayList<>();
    names.failing().forEach(n -> out.add(n.describe()));
    out.addAll(TargetMembers.refusedAnswers(names.names(), targets.refused()));
    return out;
  }

  /** The pool's hostname targets as resolved now (lookups that are due start); null: no targets. */
  private TargetResolver.Resolution resolveTargets(BackendPool pool, PoolKey key) {
    if (pool.getSpec().getTargets() == null) {
      targets.forget(key);
      return null;
    }
    return targets.resolve(key, TargetMembers.hostnames(pool.getSpec().getTargets()));
  }

  /**
   * Sharded: the pool left this replica's informer, deleted or relabelled to another shard (a move,
   * docs/design.md §7). Seal the runtime first (a batch of outcomes after this is answered 503 and
   * sent again to the next owner; every batch before it is in the view the handover is written
   * from), leave the slices as they are, hand the pool over in status if it still exists and its
   * status names this shard ({@link PoolHandoff#handOver}), then forget it.
   */
  private void leave(PoolKey key) throws Exception {
    slices.hold(key);
    Optional<PoolRuntime> runtime = runtimes.get(key);
    if (runtime.isPresent()) {
      runtime
          .get()
          .close()
          .toCompletionStage()
          .toCompletableFuture()
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
    try {
      handoff.handOver(key, status::handOver);
    } finally {
      runtimes
          .close(key)
          .toCompletionStage()
          .toCompletableFuture()
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
      slices.forget(key);
      status.forget(key);
      handoff.forget(key);
    }
  }

  /**
   * A reconcile failed (JOSDK retries it with backoff): the pool shows {@code Ready=False}, reason
   * {@code PublishFailed}, with the API server's code and reason, until a reconcile succeeds.
   */
  @Override
  public ErrorStatusUpdateControl<BackendPool> updateErrorStatus(
      BackendPool pool, Context<BackendPool> context, Exception e) {
    PoolKey key = new PoolKey(pool.getMetadata().getNamespace(), pool.getMetadata().getName());
    String message =
        e instanceof KubernetesClientException k ? ApiErrors.describe(k) : e.toString();
    status.observed(
        key,
        new PoolStatusPublisher.Observed(
            pool.getMetadata().getGeneration(),
            pool.getSpec() == null || pool.getSpec().getPolicyRef() == null
                ? null
                : pool.getSpec().getPolicyRef().getName(),
            new Problem(Conditions.PUBLISH_FAILED, "reconcile failed: " + message),
            null));
    return ErrorStatusUpdateControl.noStatusUpdate();
  }

  /** The pool is gone here: hand it over (sharded), or drop its slices' state and runtime. */
  private void deleted(PoolKey key) throws Exception {
    targets.forget(key);
    if (handoff != null) {
      leave(key);
      return;
    }
    slices.forget(key);
    status.forget(key);
    runtimes
        .close(key)
        .toCompletionStage()
        .toCompletableFuture()
        .get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Runs and publishes the pool under its policy; a missing or invalid policy (including a CA
   * bundle or client certificate that does not resolve) holds the slices as they are and keeps the
   * runtime on its last good settings. Returns the pool's problem, or null.
   */
  private Problem runOrHold(
      BackendPool pool,
      Context<BackendPool> context,
      PoolKey key,
      String policyName,
      TargetResolver.Resolution names)
      throws Exception {
    Optional<HealthPolicy> policy = sources.policy(context, key.namespace(), policyName);
    if (policy.isEmpty()) {
      slices.hold(key);
      return new Problem(
          Conditions.POLICY_NOT_FOUND,
          "HealthPolicy "
              + policyName
              + " not found in namespace "
              + key.namespace()
              + "; slices are left as they were");
    }
    try {
      return publish(pool, context, key, PolicyResolver.resolve(policy.get(), floors, tls), names);
    } catch (InvalidSettingsException e) {
      slices.hold(key);
      return new Problem(
          Conditions.INVALID_POLICY,
          "HealthPolicy "
              + policyName
              + " is invalid ("
              + e.getMessage()
              + "); slices are left as they were");
    }
  }

  /** Keeps the runtime in step and plans publishing; returns the pool's problem, or null. */
  private Problem publish(
      BackendPool pool,
      Context<BackendPool> context,
      PoolKey key,
      ResolvedPolicy resolved,
      TargetResolver.Resolution names)
      throws Exception {
    String invalid = TargetMembers.invalid(pool.getSpec(), resolved.port(), targets.refused());
    if (invalid != null) {
      slices.hold(key);
      return new Problem(Conditions.INVALID_TARGETS, invalid + "; slices are left as they were");
    }
    List<Pod> pods = names == null ? sources.pods(context, pool) : List.of();
    boolean fresh = !runtimes.contains(key);
    PoolRuntime runtime = runtimes.ensure(key, resolved.settings());
    runtime.identify(pool.getMetadata().getUid());
    if (fresh) {
      runtime.restorePanic(
          pool.getStatus() != null && Boolean.TRUE.equals(pool.getStatus().getPanic()));
    }
    List<Member> members =
        names == null
            ? members(pool, context, pods, resolved)
            : TargetMembers.members(
                pool.getSpec().getTargets(),
                pool.getSpec().getPorts(),
                resolved.port(),
                names.names(),
                PoolMembers.adminStates(pool.getSpec().getAdminStates()),
                targets.refused());
    // Waits for the pool's context to apply the update (this is a JOSDK worker thread, never an
    // event loop), so the slices planned below already show the new members.
    runtime
        .update(
            resolved.settings(),
            resolved.check(),
            resolved.version(),
            members,
            fresh
                ? RestoreFromStatus.restore(
                    pool.getStatus(), sources.ownSlices(context, pool), clock.getAsLong())
                : java.util.Map.of())
        .toCompletionStage()
        .toCompletableFuture()
        .get(WAIT_SECONDS, TimeUnit.SECONDS);
    String serviceName = PoolSources.serviceName(pool);
    return publishing.plan(
        key,
        pool,
        pods,
        runtime.view(),
        sources.service(context, pool),
        sources.foreignSlices(key.namespace(), serviceName),
        sources.leftoverEndpoints(key.namespace(), serviceName),
        sources.otherPools(context, pool));
  }

  private List<Member> members(
      BackendPool pool, Context<BackendPool> context, List<Pod> pods, ResolvedPolicy resolved) {
    return PoolMembers.members(
        pods,
        pool.getSpec().getPorts(),
        resolved.port(),
        !Boolean.FALSE.equals(pool.getSpec().getRespectPodReadiness()),
        sources.nodeZones(context, pods),
        PoolMembers.adminStates(pool.getSpec().getAdminStates()));
  }
}
