package dev.vigil.publish;

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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
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
 * <p>One lane per pool: at most one slice write in flight per pool, and changes that arrive while
 * it is in flight are merged into the next write, which reads the newest view. Lanes run on the
 * {@code writers} pool; {@link #changed} only flags the lane and hands it over, so the runtime's
 * event loop never blocks. A failed write is logged with the object, the HTTP code and the API
 * server's reason, shown in the pool's status ({@code Ready=False}, {@code PublishFailed}) through
 * the failure listener, and retried with a capped exponential backoff.
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

  /** Told when a pool's publishing starts or stops failing. */
  @FunctionalInterface
  public interface FailureListener {
    void failureChanged(PoolKey pool);
  }

  private static final class Lane {
    final PoolKey key;
    volatile SliceTarget target;
    volatile String ownerUid;
    volatile String failure;

    /**
     * Slice names this lane created; the informer may not list them yet (JOSDK's cache has them).
     */
    final Set<String> written = ConcurrentHashMap.newKeySet();

    boolean running;
    boolean again;
    int failures;
    long lastStartMs = Long.MIN_VALUE / 2;

    /** System.nanoTime() of the first change not yet written, or 0. */
    long pendingSince;

    volatile PoolView lastPublished;

    Lane(PoolKey key) {
      this.key = key;
    }
  }

  private final Map<PoolKey, Lane> lanes = new ConcurrentHashMap<>();

  /** Lanes due to run, one line per namespace; guarded by itself. */
  private final WriteTurns<Lane> ready = new WriteTurns<>(1);

  private final Function<PoolKey, Optional<PoolView>> views;
  private final Supplier<ManagedInformerEventSource<EndpointSlice, ?, ?>> cache;
  private final EndpointSliceWriter writer;
  private final ExecutorService writers;
  private final ScheduledExecutorService retries;
  private final FailureListener failureListener;
  private final LongSupplier clock;
  private final long batchMs;
  private final Timer publishTime;
  private final Counter publishFailures;

  /**
   * @param views the runtime's latest view of a pool
   * @param cache the informer of Vigil's own slices (made when JOSDK prepares event sources)
   * @param writers runs lanes; writes block here, never on an event loop
   * @param retries schedules retries after a failed write, and batched writes
   * @param batchMs a pool's next write starts at least this long after its previous one began (the
   *     first change after a quiet spell is written at once); changes in between are merged, as the
   *     EndpointSlice controller's {@code --endpoint-updates-batch-period}
   */
  public SlicePublisher(
      Function<PoolKey, Optional<PoolView>> views,
      Supplier<ManagedInformerEventSource<EndpointSlice, ?, ?>> cache,
      EndpointSliceWriter writer,
      ExecutorService writers,
      ScheduledExecutorService retries,
      FailureListener failureListener,
      LongSupplier clock,
      long batchMs,
      MeterRegistry meters) {
    this.views = views;
    this.cache = cache;
    this.writer = writer;
    this.writers = writers;
    this.retries = retries;
    this.failureListener = failureListener;
    this.clock = clock;
    this.batchMs = batchMs;
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

  /**
   * Lets the pool publish to {@code target} (from a full reconcile that found no conflict) and
   * publishes its current view there.
   */
  public void plan(PoolKey key, String ownerUid, SliceTarget target) {
    Lane lane = lanes.computeIfAbsent(key, Lane::new);
    if (ownerUid != null && !ownerUid.equals(lane.ownerUid)) {
      lane.written.clear();
    }
    lane.ownerUid = ownerUid;
    lane.target = target;
    lane.lastPublished = null;
    schedule(lane);
  }

  /**
   * Stops publishing the pool (a conflict, an invalid or missing policy): slices stay as they are.
   */
  public void hold(PoolKey key) {
    Lane lane = lanes.get(key);
    if (lane != null) {
      lane.target = null;
    }
  }

  /** Forgets a deleted pool. */
  public void forget(PoolKey key) {
    Lane lane = lanes.remove(key);
    if (lane != null) {
      lane.target = null;
    }
  }

  /** The runtime's change event: publish the pool's new view, if it may publish. */
  @Override
  public void changed(PoolKey key) {
    Lane lane = lanes.get(key);
    if (lane != null && lane.target != null) {
      schedule(lane);
    }
  }

  /** Why the pool's last slice write failed, while it keeps failing. */
  public Optional<String> failure(PoolKey key) {
    Lane lane = lanes.get(key);
    return lane == null ? Optional.empty() : Optional.ofNullable(lane.failure);
  }

  private void schedule(Lane lane) {
    synchronized (lane) {
      if (lane.pendingSince == 0) {
        lane.pendingSince = System.nanoTime();
      }
      if (lane.running) {
        lane.again = true;
        return;
      }
      lane.running = true;
      lane.again = false;
    }
    dispatch(lane);
  }

  /** Runs the lane now, or when its batch period since the last write's start has passed. */
  private void dispatch(Lane lane) {
    long wait;
    synchronized (lane) {
      wait = lane.lastStartMs + batchMs - clock.getAsLong();
    }
    try {
      if (wait > 0) {
        retries.schedule(() -> execute(lane), wait, TimeUnit.MILLISECONDS);
      } else {
        execute(lane);
      }
    } catch (RejectedExecutionException e) {
      synchronized (lane) {
        lane.running = false;
      }
    }
  }

  /**
   * Queues the lane in its namespace's line and hands the writers one run: a free writer runs the
   * lane whose turn it is (round robin between namespaces, {@link WriteTurns}), so one tenant's
   * many pools waiting for a writer cannot keep another tenant's pool from reaching the budget.
   */
  private void execute(Lane lane) {
    synchronized (ready) {
      ready.add(0, lane.key.namespace(), lane);
    }
    try {
      writers.execute(this::runNextInTurn);
    } catch (RejectedExecutionException e) {
      boolean withdrawn;
      synchronized (ready) {
        withdrawn = ready.remove(0, lane.key.namespace(), lane);
      }
      if (withdrawn) {
        synchronized (lane) {
          lane.running = false;
        }
      }
    }
  }

  private void runNextInTurn() {
    Lane lane;
    synchronized (ready) {
      lane = ready.poll();
    }
    if (lane != null) {
      run(lane);
    }
  }

  private void run(Lane lane) {
    long pendingSince;
    synchronized (lane) {
      lane.again = false;
      lane.lastStartMs = clock.getAsLong();
      pendingSince = lane.pendingSince;
      lane.pendingSince = 0;
    }
    if (!publishOnce(lane)) {
      synchronized (lane) {
        if (lane.pendingSince == 0) {
          lane.pendingSince = pendingSince;
        }
      }
      return;
    }
    if (pendingSince != 0) {
      publishTime.record(System.nanoTime() - pendingSince, TimeUnit.NANOSECONDS);
    }
    synchronized (lane) {
      if (!lane.again) {
        lane.running = false;
        return;
      }
    }
    dispatch(lane);
  }

  /** One write of the lane's newest view; false when it failed (a retry is scheduled). */
  private boolean publishOnce(Lane lane) {
    SliceTarget target = lane.target;
    Optional<PoolView> view = views.apply(lane.key);
    if (target == null || view.isEmpty() || lanes.get(lane.key) != lane) {
      return true;
    }
    if (view.get() == lane.lastPublished && lane.failure == null) {
      return true;
    }
    ManagedInformerEventSource<EndpointSlice, ?, ?> slices = cache.get();
    try {
      List<EndpointSlice> current = current(slices, lane);
      List<EndpointSlice> desired =
          EndpointSliceDesired.build(target, endpoints(view.get()), current);
      writer.apply(slices::eventFilteringUpdateAndCacheResource, desired, current);
      for (EndpointSlice d : desired) {
        lane.written.add(d.getMetadata().getName());
      }
      lane.lastPublished = view.get();
      succeeded(lane);
      return true;
    } catch (KubernetesClientException e) {
      failed(lane, describe(target, e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      synchronized (lane) {
        lane.running = false;
      }
      return false;
    } catch (RuntimeException e) {
      failed(lane, "writing the EndpointSlices of Service " + target.serviceName() + ": " + e);
    }
    return false;
  }

  /** Vigil's slices of this pool: the informer's, plus the ones this lane created since. */
  private static List<EndpointSlice> current(
      ManagedInformerEventSource<EndpointSlice, ?, ?> slices, Lane lane) {
    String uid = lane.ownerUid;
    List<EndpointSlice> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    if (uid != null) {
      for (EndpointSlice listed : slices.byIndex(OWNER_INDEX, uid)) {
        // get() prefers JOSDK's cache of this writer's own newer write
        out.add(slices.get(ResourceID.fromResource(listed)).orElse(listed));
        seen.add(listed.getMetadata().getName());
      }
    }
    for (String name : lane.written) {
      if (!seen.contains(name)) {
        slices.get(new ResourceID(name, lane.key.namespace())).ifPresent(out::add);
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

  private void succeeded(Lane lane) {
    boolean recovered;
    synchronized (lane) {
      recovered = lane.failure != null;
      lane.failure = null;
      lane.failures = 0;
    }
    if (recovered) {
      LOG.info("publishing {} again", lane.key);
      failureListener.failureChanged(lane.key);
    }
  }

  private void failed(Lane lane, String message) {
    publishFailures.increment();
    long delay;
    boolean first;
    synchronized (lane) {
      first = lane.failure == null || !lane.failure.equals(message);
      lane.failure = message;
      lane.failures++;
      delay = Math.min(MAX_BACKOFF_MS, 500L << Math.min(10, lane.failures - 1));
      lane.running = false;
    }
    LOG.warn("pool {}: {} (retry in {} ms)", lane.key, message, delay);
    if (first) {
      failureListener.failureChanged(lane.key);
    }
    try {
      retries.schedule(() -> schedule(lane), delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // shutting down
    }
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

  /** The pool's backends as slice endpoints. */
  public static List<PublishedEndpoint> endpoints(PoolView view) {
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
              b.member().terminating(),
              b.member().ports()));
    }
    return out;
  }
}
