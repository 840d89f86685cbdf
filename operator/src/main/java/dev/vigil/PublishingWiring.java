package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.HealthPolicyStatus;
import dev.vigil.ops.MeteredWriteCounter;
import dev.vigil.publish.EndpointSliceWriter;
import dev.vigil.publish.EventRecorder;
import dev.vigil.publish.EventWriter;
import dev.vigil.publish.NamespacePace;
import dev.vigil.publish.PoolStatusPublisher;
import dev.vigil.publish.ServiceWriter;
import dev.vigil.publish.SlicePublisher;
import dev.vigil.publish.StatusWriter;
import dev.vigil.publish.TransitionReporter;
import dev.vigil.publish.WriteBudget;
import dev.vigil.publish.WriteCounter;
import dev.vigil.reconcile.PoolSources;
import dev.vigil.reconcile.PublishingPlanner;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of the verdict's way out (docs/publishing.md): the write budget, Events, the slice and
 * status publishers and their threads. Opened before the runtimes (they report transitions as
 * Events), the publishers once the runtimes exist ({@link #publishers}).
 */
final class PublishingWiring {
  private static final Logger LOG = LoggerFactory.getLogger(PublishingWiring.class);
  // Slice writes block a thread for one API round trip; 8 keep ~400 writes/s in flight at 20 ms.
  // One namespace holds at most half of them (and of the status writers), so another namespace's
  // write finds a free writer however slowly the API server answers the first one's (issue 31).
  private static final int SLICE_WRITERS = 8;
  private static final int STATUS_WRITERS = 2;
  // A pool's slice writes start at least this far apart; changes in between are merged.
  private static final long SLICE_BATCH_MS = 100;

  final WriteBudget budget;
  final PoolSources sources = new PoolSources();
  final WriteCounter writes;
  private final KubernetesClient client;
  private final OperatorConfig config;
  private final LongSupplier clock;
  private final EventRecorder events;
  private final ScheduledExecutorService sliceWriters;
  private final ScheduledExecutorService statusWriters;

  PublishingWiring(StartOptions o, MeterRegistry registry, Lifecycle lifecycle) {
    config = o.config;
    client = o.client;
    clock = o.clock;
    OperatorConfig.Publishing settings = config.publishing();
    budget = new WriteBudget(settings.apiQps(), settings.apiBurst(), System::nanoTime);
    writes = new MeteredWriteCounter(registry);
    ScheduledExecutorService eventThread =
        Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "vigil-events"));
    events =
        new EventRecorder(new EventWriter(client, budget, sources::poolUid), "vigil", 10, 60_000);
    eventThread.scheduleWithFixedDelay(
        () -> events.flush(clock.getAsLong()), 1, 1, TimeUnit.SECONDS);
    // Slice writes and their timers (batch period, retries) share their own threads: a status or
    // Event backlog blocks other threads, never these.
    sliceWriters = Executors.newScheduledThreadPool(SLICE_WRITERS, named("vigil-slices"));
    statusWriters = Executors.newScheduledThreadPool(STATUS_WRITERS, named("vigil-status"));
    lifecycle.on(Stage.WRITES, "the Event writer", () -> flushEvents(eventThread));
    lifecycle.on(Stage.WRITES, "the slice writers", sliceWriters::shutdownNow);
    lifecycle.on(Stage.WRITES, "the status writers", statusWriters::shutdownNow);
  }

  /** The transitions of the last second still become Events, within 2 s; the rest is dropped. */
  private void flushEvents(ScheduledExecutorService eventThread) {
    try {
      eventThread.execute(() -> events.flush(clock.getAsLong()));
    } catch (RejectedExecutionException e) {
      // already stopped
    }
    eventThread.shutdown();
    try {
      eventThread.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    eventThread.shutdownNow();
  }

  /** The runtimes' transitions as Events and metrics. */
  TransitionReporter transitions(MeterRegistry registry) {
    return new TransitionReporter(events, registry);
  }

  /**
   * The slice and status publishers, which take the runtime's change event straight from the
   * runtimes (no reconcile). The status shows a slice write's failure (it reads {@code
   * slices::failure}) and a failure's change asks for a status write (a failure listener).
   */
  final class Publishers {
    final SlicePublisher slices;
    final PoolStatusPublisher status;

    private Publishers(PoolRuntimes runtimes, MeterRegistry registry) {
      Function<PoolKey, Optional<PoolView>> views = key -> runtimes.get(key).map(PoolRuntime::view);
      slices =
          new SlicePublisher(
              views,
              sources::sliceCache,
              new EndpointSliceWriter(client, budget, writes),
              sliceWriters,
              sliceWriters,
              clock,
              SLICE_BATCH_MS,
              NamespacePace.perSecond(config.publishing().namespaceWriteQps()),
              SLICE_WRITERS / 2,
              registry);
      status =
          new PoolStatusPublisher(
              client,
              budget,
              statusWriters,
              views,
              slices::failure,
              sources::primaries,
              clock,
              config.publishing().statusIntervalMs(),
              NamespacePace.perSecond(config.publishing().namespaceWriteQps()),
              STATUS_WRITERS / 2,
              () -> writes.status(1));
      runtimes.addListener(slices);
      runtimes.addListener(status);
      slices.addFailureListener(status);
    }

    /** The Service writer and the slices, for the pool reconciler. */
    PublishingPlanner pools() {
      return new PublishingPlanner(
          new ServiceWriter(client, writes, budget, sources::serviceCache), slices);
    }
  }

  /**
   * The publishers of {@code runtimes}. A stop writes every pool's pending status first (the next
   * owner restores from status, so an accepted batch is never lost), unless {@code mayWrite} says
   * this replica was fenced (a fenced replica writes nothing).
   */
  Publishers publishers(
      PoolRuntimes runtimes,
      MeterRegistry registry,
      BooleanSupplier mayWrite,
      Lifecycle lifecycle) {
    Publishers p = new Publishers(runtimes, registry);
    lifecycle.on(
        Stage.FLUSH,
        "the pools' status",
        () -> {
          int unwritten = mayWrite.getAsBoolean() ? p.status.flushAll() : 0;
          if (unwritten > 0) {
            LOG.warn("{} pools' status could not be written before stopping", unwritten);
          }
        });
    return p;
  }

  /** The HealthPolicy status writer. */
  StatusWriter<HealthPolicyStatus, HealthPolicy> policyStatus() {
    return new StatusWriter<>(
        clock, config.publishing().statusIntervalMs(), budget, () -> writes.status(1));
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> daemon(r, prefix + "-" + n.incrementAndGet());
  }

  static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
