package dev.vigil.publish;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.publish.PoolStatusAggregator.Problem;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolListener;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.ManagedInformerEventSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one writer of BackendPool status, coalesced in a {@link CoalescingLane}: at most one write in
 * flight per pool, at most one per pool per {@code minIntervalMs}, and none when nothing a reader
 * relies on changed (probe times alone never cause a write). Status is built from what the last
 * full reconcile observed ({@link #observed}: generation, policy, the problem if any), the
 * runtime's newest view and the slice publisher's failure, so a change of the verdict reaches
 * status without a reconcile (docs/design.md §3).
 *
 * <p>Writes run on {@code executor} (never an event loop), each after a {@link
 * WriteBudget.Priority#STATUS} token, as a PUT of the status subresource on the cached
 * resourceVersion through JOSDK's {@code eventFilteringUpdateAndCacheResource}, so the primary
 * cache holds the write and the write's own watch event triggers no reconcile. A conflict (the
 * cache lagged someone else's write) retries after the cache caught up. A handover's status is
 * written here too ({@link #handOver}), so a pool's status has one writer.
 */
public final class PoolStatusPublisher implements PoolListener {
  private static final Logger LOG = LoggerFactory.getLogger(PoolStatusPublisher.class);
  private static final long CONFLICT_RETRY_MS = 200;
  private static final long ERROR_RETRY_MS = 5_000;

  /** What a full reconcile found, for the status written after it. */
  /**
   * @param unresolved with {@code spec.targets}: why hostnames do not resolve (empty: they all do);
   *     null: the pool has no targets, so no {@code TargetsResolved} condition
   */
  public record Observed(
      Long generation, String policy, Problem problem, List<String> unresolved) {}

  /** Sharded: this replica's shard name, shown in every status it writes; null: not sharded. */
  private volatile String shard;

  private final Map<PoolKey, Observed> entries = new ConcurrentHashMap<>();
  private final CoalescingLane<PoolKey> lane;
  private final KubernetesClient client;
  private final WriteBudget budget;
  private final Function<PoolKey, Optional<PoolView>> views;
  private final Function<PoolKey, Optional<String>> publishFailure;
  private final Supplier<ManagedInformerEventSource<BackendPool, ?, ?>> primaries;
  private final LongSupplier clock;
  private final Runnable onWrite;

  /**
   * @param executor runs the writes (never an event loop) and their delays
   * @param primaries JOSDK's cache of BackendPools (available once the controller started)
   * @param publishFailure why the pool's slices could not be written, while that lasts
   * @param pace the cap on each namespace's status writes ({@code --namespace-write-qps})
   * @param maxWritingPerNamespace the most writers one namespace's pools hold at once
   * @param onWrite told after each write (metrics)
   */
  public PoolStatusPublisher(
      KubernetesClient client,
      WriteBudget budget,
      ScheduledExecutorService executor,
      Function<PoolKey, Optional<PoolView>> views,
      Function<PoolKey, Optional<String>> publishFailure,
      Supplier<ManagedInformerEventSource<BackendPool, ?, ?>> primaries,
      LongSupplier clock,
      long minIntervalMs,
      NamespacePace pace,
      int maxWritingPerNamespace,
      Runnable onWrite) {
    this.client = client;
    this.budget = budget;
    this.lane =
        new CoalescingLane<>(
            executor,
            executor,
            PoolKey::namespace,
            pace,
            maxWritingPerNamespace,
            clock,
            minIntervalMs,
            this::write);
    this.views = views;
    this.publishFailure = publishFailure;
    this.primaries = primaries;
    this.clock = clock;
    this.onWrite = onWrite;
  }

  /** Records what a reconcile found and writes the status it implies (coalesced). */
  public void observed(PoolKey key, Observed observed) {
    entries.put(key, observed);
    lane.request(key);
  }

  /** A runtime's view changed, or its publishing started or stopped failing. */
  @Override
  public void changed(PoolKey key) {
    if (entries.containsKey(key)) {
      lane.request(key);
    }
  }

  /** Sharded: statuses name this shard and carry the Probing condition. */
  public void ownedBy(String shard) {
    this.shard = shard;
  }

  public void forget(PoolKey key) {
    entries.remove(key);
    lane.forget(key);
  }

  /**
   * Sharded: writes the status that hands the pool to {@code owner} (null: to nobody), built like
   * every other from what the last reconcile observed and the runtime's last view (sealed by the
   * caller), on the pool's status as {@code current} has it; without either (this replica never ran
   * the pool), that status with only the owner changed. A PUT of the status subresource on {@code
   * current}'s resourceVersion (a conflict throws), after a {@link WriteBudget.Priority#HANDOVER}
   * token: the pool has left the primary cache, so the write goes around it.
   */
  public void handOver(BackendPool current, String owner) throws InterruptedException {
    PoolKey key =
        new PoolKey(current.getMetadata().getNamespace(), current.getMetadata().getName());
    BackendPoolStatus previous = current.getStatus();
    Observed observed = entries.get(key);
    BackendPoolStatus status = observed == null ? null : build(key, observed, previous);
    if (status == null) {
      status = previous == null ? new BackendPoolStatus() : Serialization.clone(previous);
    }
    PoolStatusAggregator.owned(status, previous, owner, shard, clock.getAsLong());
    BackendPool copy = Serialization.clone(current);
    copy.setStatus(status);
    budget.acquire(WriteBudget.Priority.HANDOVER, key.namespace());
    client.resource(copy).updateStatus();
    onWrite.run();
  }

  /**
   * Writes the pool's status now, whatever the interval; retries a conflict a few times. False when
   * it could not be written.
   */
  private boolean flushNow(PoolKey key) {
    for (int attempt = 0; entries.containsKey(key) && attempt < 5; attempt++) {
      if (write(key).retryAfterMs() < 0) {
        return true;
      }
    }
    return !entries.containsKey(key);
  }

  /**
   * Writes every pool's status that changed since its last write, now, whatever the interval: a
   * graceful stop calls it once no more outcomes come in, so what accepted outcomes did (an
   * ejection, its multiplier) reaches status, which the next owner restores from. Returns how many
   * pools could not be written.
   */
  public int flushAll() {
    int failed = 0;
    for (PoolKey key : List.copyOf(entries.keySet())) {
      if (!flushNow(key)) {
        failed++;
      }
    }
    return failed;
  }

  /** Writes the pool's status if it changed (one run of its lane). */
  private CoalescingLane.Done write(PoolKey key) {
    Observed observed = entries.get(key);
    ManagedInformerEventSource<BackendPool, ?, ?> cache = primaries.get();
    Optional<BackendPool> cached =
        cache == null ? Optional.empty() : cache.get(new ResourceID(key.name(), key.namespace()));
    if (cached.isEmpty() || observed == null) {
      return CoalescingLane.Done.NOTHING;
    }
    BackendPool pool = cached.get();
    BackendPoolStatus status = build(key, observed, pool.getStatus());
    if (status != null && shard != null) {
      PoolStatusAggregator.owned(status, pool.getStatus(), shard, shard, clock.getAsLong());
    }
    if (status == null || StatusWriter.materiallyEqual(pool.getStatus(), status)) {
      return CoalescingLane.Done.NOTHING;
    }
    return update(key, cache, pool, status);
  }

  /**
   * PUTs {@code status} on the cached pool's resourceVersion through the primary cache, after a
   * {@link WriteBudget.Priority#STATUS} token: a conflict retries soon, a pool gone is done.
   */
  private CoalescingLane.Done update(
      PoolKey key,
      ManagedInformerEventSource<BackendPool, ?, ?> cache,
      BackendPool pool,
      BackendPoolStatus status) {
    BackendPool copy = Serialization.clone(pool);
    copy.setStatus(status);
    try {
      budget.acquire(WriteBudget.Priority.STATUS, key.namespace());
      cache.eventFilteringUpdateAndCacheResource(copy, c -> client.resource(c).updateStatus());
      onWrite.run();
      return CoalescingLane.Done.WROTE;
    } catch (KubernetesClientException ex) {
      if (ex.getCode() == 409) {
        return CoalescingLane.Done.retryAfter(CONFLICT_RETRY_MS);
      }
      if (ex.getCode() == 404) {
        return CoalescingLane.Done.NOTHING;
      }
      LOG.warn(
          "could not write status of BackendPool {}: {} (retry in {} ms)",
          key,
          ApiErrors.describe(ex),
          ERROR_RETRY_MS);
      return CoalescingLane.Done.retryAfter(ERROR_RETRY_MS);
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      return CoalescingLane.Done.NOTHING;
    } catch (RuntimeException ex) {
      LOG.warn("could not write status of BackendPool {}: {}", key, ex.toString());
      return CoalescingLane.Done.retryAfter(ERROR_RETRY_MS);
    }
  }

  private BackendPoolStatus build(PoolKey key, Observed observed, BackendPoolStatus previous) {
    Problem problem = observed.problem();
    PoolView view = views.apply(key).orElse(null);
    if (problem == null) {
      problem =
          publishFailure
              .apply(key)
              .map(message -> new Problem(Conditions.PUBLISH_FAILED, message))
              .orElse(null);
    }
    if (problem == null && view == null) {
      return null;
    }
    BackendPoolStatus status =
        PoolStatusAggregator.build(
            observed.generation(), observed.policy(), view, problem, previous, clock.getAsLong());
    PoolStatusAggregator.resolved(status, previous, observed.unresolved(), clock.getAsLong());
    return status;
  }
}
