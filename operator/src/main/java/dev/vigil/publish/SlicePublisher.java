package dev.vigil.publish;

import dev.vigil.health.BackendHold;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolListener;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.ManagedInformerEventSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fast path from a verdict to the EndpointSlices (docs/design.md §3, §6). A change of a pool's
 * view is written to that pool's slices straight from the runtime's change event: no reconcile, no
 * API read, no wait on an event loop. What the slices carry besides endpoints (the {@link
 * SliceTarget}: Service labels, ports, owner) comes from the last full reconcile, which also
 * decides whether the pool may publish at all ({@link #plan} or {@link #hold}).
 *
 * <p>Each pool's writes run in a {@link CoalescingLane}: at most one slice write in flight per
 * pool, changes that arrive meanwhile merged into the next write (which reads the newest view), the
 * next write at least {@code batchMs} after the last one began, due pools taking turns between
 * namespaces for the {@code writers}. {@link #changed} only asks the lane, so the runtime's event
 * loop never blocks. A failed write is logged with the object, the HTTP code and the API server's
 * reason, shown in the pool's status ({@code Ready=False}, {@code PublishFailed}: the failure
 * listeners are told) and retried with a capped exponential backoff.
 */
public final class SlicePublisher implements PoolListener {
  private static final Logger LOG = LoggerFactory.getLogger(SlicePublisher.class);
  private static final long MAX_BACKOFF_MS = 30_000;

  /** Time from a pool's first unpublished change to the end of the write that published it. */
  public static final String PUBLISH_SECONDS = "vigil_slice_publish_seconds";

  /** The slice informer's index of owner UIDs (registered by the reconciler's sources). */
  public static final String OWNER_INDEX = "vigil.dev/owner-uid";

  /** Slice writes that failed (each is retried). */
  public static final String PUBLISH_FAILURES = "vigil_slice_publish_failures_total";

  /** What one pool publishes to, and how its last writes went. */
  private static final class PoolSlices {
    final PoolKey key;
    volatile SliceTarget target;
    volatile String ownerUid;
    volatile String failure;

    /**
     * Slice names this pool's writes created; the informer may not list them yet (JOSDK's cache has
     * them).
     */
    final Set<String> written = ConcurrentHashMap.newKeySet();

    /** Guarded by this. */
    int failures;

    /** System.nanoTime() of the first change not yet written, or 0; guarded by this. */
    long pendingSince;

    volatile PoolView lastPublished;

    PoolSlices(PoolKey key) {
      this.key = key;
    }

    synchronized void pending() {
      if (pendingSince == 0) {
        pendingSince = System.nanoTime();
      }
    }
  }

  private final Map<PoolKey, PoolSlices> pools = new ConcurrentHashMap<>();
  private final List<PoolListener> failureListeners = new CopyOnWriteArrayList<>();
  private final CoalescingLane<PoolKey> lane;
  private final Function<PoolKey, Optional<PoolView>> views;
  private final Supplier<ManagedInformerEventSource<EndpointSlice, ?, ?>> cache;
  private final EndpointSliceWriter writer;
  private final Timer publishTime;
  private final Counter publishFailures;

  /**
   * @param views the runtime's latest view of a pool
   * @param cache the informer of Vigil's own slices (made when JOSDK prepares event sources)
   * @param writers runs the writes; they block here, never on an event loop
   * @param retries schedules retries after a failed write, and batched writes
   * @param batchMs a pool's next write starts at least this long after its previous one began (the
   *     first change after a quiet spell is written at once); changes in between are merged, as the
   *     EndpointSlice controller's {@code --endpoint-updates-batch-period}
   * @param pace the cap on each namespace's slice updates ({@code --namespace-write-qps})
   * @param maxWritingPerNamespace the most writers one namespace's pools hold at once
   */
  public SlicePublisher(
      Function<PoolKey, Optional<PoolView>> views,
      Supplier<ManagedInformerEventSource<EndpointSlice, ?, ?>> cache,
      EndpointSliceWriter writer,
      ExecutorService writers,
      ScheduledExecutorService retries,
      LongSupplier clock,
      long batchMs,
      NamespacePace pace,
      int maxWritingPerNamespace,
      MeterRegistry meters) {
    this.views = views;
    this.cache = cache;
    this.writer = writer;
    this.lane =
        new CoalescingLane<>(
            retries,
            writers,
            PoolKey::namespace,
            pace,
            maxWritingPerNamespace,
            clock,
            batchMs,
            this::publish);
    this.publishTime =
        Timer.builder(PUBLISH_SECONDS)
            .description(
                "From a pool's first unpublished change of its verdict to the end of the slice"
                    + " write that published it")
            .publishPercentileHistogram()
            .register(meters);
    this.publishFailures =
        Counter.builder(PUBLISH_FAILURES)
            .description("EndpointSlice writes that failed; each is retried with backoff")
            .register(meters);
  }

  /** Told (on a writer thread) when a pool's publishing starts or stops failing. */
  public void addFailureListener(PoolListener listener) {
    failureListeners.add(listener);
  }

  /**
   * Lets the pool publish to {@code target} (from a full reconcile that found no conflict) and
   * publishes its current view there.
   */
  public void plan(PoolKey key, String ownerUid, SliceTarget target) {
    PoolSlices pool = pools.computeIfAbsent(key, PoolSlices::new);
    if (ownerUid != null && !ownerUid.equals(pool.ownerUid)) {
      pool.written.clear();
    }
    pool.ownerUid = ownerUid;
    pool.target = target;
    pool.lastPublished = null;
    pool.pending();
    lane.request(key);
  }

  /**
   * Stops publishing the pool (a conflict, an invalid or missing policy): slices stay as they are.
   */
  public void hold(PoolKey key) {
    PoolSlices pool = pools.get(key);
    if (pool != null) {
      pool.target = null;
    }
  }

  /** Forgets a deleted pool. */
  public void forget(PoolKey key) {
    PoolSlices pool = pools.remove(key);
    if (pool != null) {
      pool.target = null;
    }
    lane.forget(key);
  }

  /** The runtime's change event: publish the pool's new view, if it may publish. */
  @Override
  public void changed(PoolKey key) {
    PoolSlices pool = pools.get(key);
    if (pool != null && pool.target != null) {
      pool.pending();
      lane.request(key);
    }
  }

  /** Why the pool's last slice write failed, while it keeps failing. */
  public Optional<String> failure(PoolKey key) {
    PoolSlices pool = pools.get(key);
    return pool == null ? Optional.empty() : Optional.ofNullable(pool.failure);
  }

  /** One run of the pool's lane: a write of its newest view, timed from its first change. */
  private CoalescingLane.Done publish(PoolKey key) {
    PoolSlices pool = pools.get(key);
    if (pool == null) {
      return CoalescingLane.Done.NOTHING;
    }
    long pendingSince;
    synchronized (pool) {
      pendingSince = pool.pendingSince;
      pool.pendingSince = 0;
    }
    CoalescingLane.Done done = publishOnce(pool);
    if (done.retryAfterMs() >= 0) {
      synchronized (pool) {
        if (pool.pendingSince == 0) {
          pool.pendingSince = pendingSince;
        }
      }
    } else if (pendingSince != 0) {
      publishTime.record(System.nanoTime() - pendingSince, TimeUnit.NANOSECONDS);
    }
    return done;
  }

  /** One write of the pool's newest view, if it changed. */
  private CoalescingLane.Done publishOnce(PoolSlices pool) {
    SliceTarget target = pool.target;
    Optional<PoolView> view = views.apply(pool.key);
    if (target == null || view.isEmpty() || pools.get(pool.key) != pool) {
      return CoalescingLane.Done.NOTHING;
    }
    if (view.get() == pool.lastPublished && pool.failure == null) {
      return CoalescingLane.Done.NOTHING;
    }
    ManagedInformerEventSource<EndpointSlice, ?, ?> slices = cache.get();
    try {
      List<EndpointSlice> current = current(slices, pool);
      List<EndpointSlice> desired =
          EndpointSliceDesired.build(target, endpoints(view.get()), current);
      writer.apply(slices::eventFilteringUpdateAndCacheResource, desired, current);
      for (EndpointSlice d : desired) {
        pool.written.add(d.getMetadata().getName());
      }
      pool.lastPublished = view.get();
      succeeded(pool);
      return CoalescingLane.Done.WROTE;
    } catch (KubernetesClientException e) {
      return failed(pool, describe(target, e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // stopping
      return CoalescingLane.Done.NOTHING;
    } catch (RuntimeException e) {
      return failed(
          pool, "writing the EndpointSlices of Service " + target.serviceName() + ": " + e);
    }
  }

  /** Vigil's slices of this pool: the informer's, plus the ones this lane created since. */
  private static List<EndpointSlice> current(
      ManagedInformerEventSource<EndpointSlice, ?, ?> slices, PoolSlices pool) {
    String uid = pool.ownerUid;
    List<EndpointSlice> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    if (uid != null) {
      for (EndpointSlice listed : slices.byIndex(OWNER_INDEX, uid)) {
        // get() prefers JOSDK's cache of this writer's own newer write
        out.add(slices.get(ResourceID.fromResource(listed)).orElse(listed));
        seen.add(listed.getMetadata().getName());
      }
    }
    for (String name : pool.written) {
      if (!seen.contains(name)) {
        slices.get(new ResourceID(name, pool.key.namespace())).ifPresent(out::add);
      }
    }
    return out;
  }

  /** The UIDs of a slice's owners, for {@link #OWNER_INDEX}. */
  public static List<String> ownerUids(EndpointSlice slice) {
    if (slice.getMetadata().getOwnerReferences() == null) {
      return List.of();
    }
    return slice.getMetadata().getOwnerReferences().stream()
        .map(o -> o.getUid())
        .filter(java.util.Objects::nonNull)
        .toList();
  }

  private void succeeded(PoolSlices pool) {
    boolean recovered;
    synchronized (pool) {
      recovered = pool.failure != null;
      pool.failure = null;
      pool.failures = 0;
    }
    if (recovered) {
      LOG.info("publishing {} again", pool.key);
      failureListeners.forEach(l -> l.changed(pool.key));
    }
  }

  private CoalescingLane.Done failed(PoolSlices pool, String message) {
    publishFailures.increment();
    long delay;
    boolean first;
    synchronized (pool) {
      first = pool.failure == null || !pool.failure.equals(message);
      pool.failure = message;
      pool.failures++;
      delay = Math.min(MAX_BACKOFF_MS, 500L << Math.min(10, pool.failures - 1));
    }
    LOG.warn("pool {}: {} (retry in {} ms)", pool.key, message, delay);
    if (first) {
      failureListeners.forEach(l -> l.changed(pool.key));
    }
    return CoalescingLane.Done.retryAfter(delay);
  }

  /** The object, the HTTP code and the API server's reason, in one line. */
  static String describe(SliceTarget target, KubernetesClientException e) {
    return "writing the EndpointSlices of Service "
        + target.namespace()
        + "/"
        + target.serviceName()
        + " failed: "
        + ApiErrors.describe(e);
  }

  /**
   * The pool's backends as slice endpoints: a backend held in maint is left out, one held in drain
   * is published like a terminating Pod (docs/decision.md, "Admin state and the agent").
   */
  public static List<PublishedEndpoint> endpoints(PoolView view) {
    List<PublishedEndpoint> out = new ArrayList<>(view.backends().size());
    for (BackendSnapshot b : view.backends()) {
      BackendHold.Kind hold = b.hold().kind();
      if (hold == BackendHold.Kind.MAINT) {
        continue; // maint: left out of the slice (docs/decision.md)
      }
      out.add(
          PublishedEndpoint.of(
              b.member().ip(),
              b.member().id(),
              b.member().podUid(),
              b.member().nodeName(),
              b.member().zone(),
              b.published(),
              b.healthy(),
              b.member().terminating() || hold == BackendHold.Kind.DRAIN,
              b.member().ports()));
    }
    return out;
  }
}
