package dev.vigil.reconcile;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.reconcile.PoolStatusAggregator.Problem;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Reconciles a BackendPool: observe (policy, Pods, Service, slices), validate, keep the runtime in
 * step, publish slices, record status. Every collaborator comes in by constructor; the work sits in
 * {@link PoolPublisher}, the pure builders and the writers.
 */
@ControllerConfiguration(name = BackendPoolReconciler.NAME, triggerReconcilerOnAllEvents = true)
public final class BackendPoolReconciler implements Reconciler<BackendPool> {
  public static final String NAME = "backendpool";
  private static final long WAIT_SECONDS = 30;

  private final PoolRuntimes runtimes;
  private final PoolSources sources;
  private final PoolPublisher publisher;
  private final StatusWriter<BackendPoolStatus, BackendPool> statusWriter;
  private final LongSupplier clock;
  private final SimpleInboundEventSource<BackendPool> runtimeEvents =
      new SimpleInboundEventSource<>("pool-runtime");

  public BackendPoolReconciler(
      PoolRuntimes runtimes,
      PoolSources sources,
      PoolPublisher publisher,
      StatusWriter<BackendPoolStatus, BackendPool> statusWriter,
      LongSupplier clock) {
    this.runtimes = runtimes;
    this.sources = sources;
    this.publisher = publisher;
    this.statusWriter = statusWriter;
    this.clock = clock;
    runtimes.addListener(
        key -> runtimeEvents.propagateEvent(new ResourceID(key.name(), key.namespace())));
  }

  @Override
  public List<EventSource<?, BackendPool>> prepareEventSources(
      EventSourceContext<BackendPool> context) {
    List<EventSource<?, BackendPool>> list = sources.prepare(context);
    return java.util.stream.Stream.concat(list.stream(), java.util.stream.Stream.of(runtimeEvents))
        .toList();
  }

  @Override
  public UpdateControl<BackendPool> reconcile(BackendPool pool, Context<BackendPool> context)
      throws Exception {
    PoolKey key = new PoolKey(pool.getMetadata().getNamespace(), pool.getMetadata().getName());
    if (context.isPrimaryResourceDeleted()) {
      runtimes
          .close(key)
          .toCompletionStage()
          .toCompletableFuture()
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
      statusWriter.forget(key.namespace(), key.name());
      return UpdateControl.noUpdate();
    }
    String policyName = pool.getSpec().getPolicyRef().getName();
    Optional<HealthPolicy> policy = sources.policy(context, key.namespace(), policyName);
    Problem problem = null;
    PoolView view = runtimes.get(key).map(PoolRuntime::view).orElse(null);
    if (policy.isEmpty()) {
      problem =
          new Problem(
              Conditions.POLICY_NOT_FOUND,
              "HealthPolicy "
                  + policyName
                  + " not found in namespace "
                  + key.namespace()
                  + "; slices are left as they were");
    } else {
      try {
        ResolvedPolicy resolved = PolicyResolver.resolve(policy.get());
        PoolPublisher.Outcome outcome = publish(pool, context, key, resolved);
        view = outcome.view();
        problem = outcome.problem();
      } catch (InvalidSettingsException e) {
        problem =
            new Problem(
                Conditions.INVALID_POLICY,
                "HealthPolicy "
                    + policyName
                    + " is invalid ("
                    + e.getMessage()
                    + "); slices are left as they were");
      }
    }
    BackendPoolStatus status =
        PoolStatusAggregator.build(
            pool.getMetadata().getGeneration(),
            policyName,
            view,
            problem,
            pool.getStatus(),
            clock.getAsLong());
    Optional<Duration> later = statusWriter.write(context, pool, status);
    return later.isPresent()
        ? UpdateControl.<BackendPool>noUpdate().rescheduleAfter(later.get())
        : UpdateControl.noUpdate();
  }

  private PoolPublisher.Outcome publish(
      BackendPool pool, Context<BackendPool> context, PoolKey key, ResolvedPolicy resolved)
      throws Exception {
    List<Pod> pods = sources.pods(context, pool);
    List<EndpointSlice> ownSlices = sources.ownSlices(context, pool);
    boolean fresh = !runtimes.contains(key);
    PoolRuntime runtime = runtimes.ensure(key, resolved.settings());
    if (fresh) {
      runtime.restorePanic(
          pool.getStatus() != null && Boolean.TRUE.equals(pool.getStatus().getPanic()));
    }
    List<Member> members =
        PoolMembers.members(
            pods,
            pool.getSpec().getPorts(),
            resolved.port(),
            !Boolean.FALSE.equals(pool.getSpec().getRespectPodReadiness()),
            sources.nodeZones(context, pods));
    runtime
        .update(
            resolved.settings(),
            resolved.check(),
            resolved.version(),
            members,
            fresh
                ? RestoreFromStatus.restore(pool.getStatus(), ownSlices, clock.getAsLong())
                : java.util.Map.of())
        .toCompletionStage()
        .toCompletableFuture()
        .get(WAIT_SECONDS, TimeUnit.SECONDS);
    PoolView view =
        runtime
            .freshView()
            .toCompletionStage()
            .toCompletableFuture()
            .get(WAIT_SECONDS, TimeUnit.SECONDS);
    Service service = sources.service(context, pool);
    return publisher.publish(
        context, pool, pods, view, service, ownSlices, sources.otherPools(context, pool));
  }
}
