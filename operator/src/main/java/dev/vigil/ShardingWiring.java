package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.ops.Leadership;
import dev.vigil.publish.PoolStatusPublisher;
import dev.vigil.publish.WriteBudget;
import dev.vigil.runtime.FailingBackends;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.shard.CheckerGauges;
import dev.vigil.shard.CheckerReport;
import dev.vigil.shard.FailingShare;
import dev.vigil.shard.PoolHandoff;
import dev.vigil.shard.ReplicaZone;
import dev.vigil.shard.ShardConfig;
import dev.vigil.shard.ShardRing;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of scale-out (docs/design.md §7): this replica's shard Lease and the ring the leader
 * shards over, the handoff of moved pools, and the per-shard gauges. The Lease's renewals carry
 * this replica's zone and failing share (§8): the share samples the runtimes' counts at each
 * renewal, on the Lease's thread. Unsharded, {@link #ring} and {@link #handoff} are null and every
 * pool is this replica's.
 */
final class ShardingWiring {
  private static final Logger LOG = LoggerFactory.getLogger(ShardingWiring.class);

  final ShardRing ring;
  final PoolHandoff handoff;
  private final ShardConfig shards;
  private final String zone;

  /** Where other replicas ask this one to confirm a Down ({@code host:port}); "" until known. */
  private volatile String address = "";

  /**
   * Sharded: the shard Lease guards every pool this replica runs. Lost, the replica stops its
   * probes (so nothing changes and nothing is written), its reconciles run no pool, and {@code
   * onFenced} runs (in a cluster: exit and restart clean).
   */
  ShardingWiring(
      StartOptions o,
      WriteBudget budget,
      Leadership leadership,
      PoolRuntimes runtimes,
      MeterRegistry registry,
      Lifecycle lifecycle) {
    shards = o.config.shards();
    if (!shards.enabled()) {
      ring = null;
      handoff = null;
      zone = "";
      return;
    }
    zone = ReplicaZone.resolve(shards, o.client);
    FailingShare share = new FailingShare(FailingShare.WINDOW, o.clock);
    ring =
        shardRing(
            o,
            budget,
            registry,
            () -> fenced(o, leadership, runtimes),
            () -> {
              FailingBackends n = runtimes.failingBackends();
              return new CheckerReport(zone, share.sample(n.failing(), n.probed()), address);
            });
    lifecycle.on(Stage.LEASES, "the shard Lease", ring::close);
    gauges(runtimes, registry);
    CheckerGauges.register(registry, shards.identity(), share::share, ring::selfSuspect);
    handoff =
        new PoolHandoff(
            o.client,
            shards.identity(),
            ring.lease()::writable,
            ring::state,
            o.clock,
            shards.leaseDurationMs());
  }

  /**
   * This replica's shard Lease and the ring the leader shards over; {@code onLost} when fenced;
   * {@code report} what each renewal carries (zone, failing share).
   */
  private ShardRing shardRing(
      StartOptions o,
      WriteBudget budget,
      MeterRegistry registry,
      Runnable onLost,
      Supplier<CheckerReport> report) {
    return new ShardRing(
        o.client,
        budget,
        shards,
        new ShardRing.Leader(
            o.config.leader().leaseName(),
            o.election.leaseDuration(),
            o.election.renewDeadline(),
            o.election.retryPeriod()),
        o.config.namespaces(),
        o.clock,
        registry,
        onLost,
        report);
  }

  /** The shard Lease is lost: stop probing and writing, then {@code onFenced}. */
  private static void fenced(StartOptions o, Leadership leadership, PoolRuntimes runtimes) {
    LOG.warn("shard Lease lost: this replica stops probing and writing");
    leadership.fenced();
    runtimes.closeAll();
    o.onFenced.run();
  }

  /** Per shard: each replica's /metrics shows its own share (probes/s: rate of vigil_probes). */
  private void gauges(PoolRuntimes runtimes, MeterRegistry registry) {
    Gauge.builder("vigil_shard_pools", runtimes, r -> r.all().size())
        .description("BackendPools this replica owns and probes")
        .tag("shard", shards.identity())
        .register(registry);
    Gauge.builder(
            "vigil_shard_backends",
            runtimes,
            r -> r.all().stream().mapToInt(p -> p.view().snapshot().counts().total()).sum())
        .description("Backends in the BackendPools this replica owns")
        .tag("shard", shards.identity())
        .register(registry);
  }

  boolean enabled() {
    return ring != null;
  }

  /** Unsharded, or sharded and still holding the shard Lease (a fenced replica writes nothing). */
  boolean mayWrite() {
    return ring == null || ring.lease().writable();
  }

  /**
   * Takes the shard Lease (a replica restarted under its old name may find it fenced until it
   * expires), then, once writable, hands over the pools moved away while a replica of this name was
   * down.
   */
  void start(Set<String> namespaces, PoolStatusPublisher status) {
    if (ring == null) {
      return;
    }
    try {
      if (!ring.start(Duration.ofMillis(shards.leaseDurationMs() * 2))) {
        LOG.warn("shard Lease {} not taken yet; reconciling once it is", shards.identity());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while taking the shard Lease", e);
    }
    Thread sweep =
        PublishingWiring.daemon(() -> sweepOnceWritable(namespaces, status), "vigil-shard-sweep");
    sweep.start();
  }

  /**
   * Once this replica holds its shard Lease, on a thread of its own: hands over the pools whose
   * status still names this shard but that moved away while a replica of this name was down.
   */
  private void sweepOnceWritable(Set<String> namespaces, PoolStatusPublisher status) {
    try {
      while (!ring.lease().writable()) {
        if (ring.lease().lost()) {
          return;
        }
        Thread.sleep(200);
      }
      handoff.sweep(namespaces, status::handOver);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("could not look for pools to hand over: {}", e.toString());
    }
  }

  String identity() {
    return shards.identity();
  }

  /** This replica's zone ("" when unknown or unsharded). */
  String zone() {
    return zone;
  }

  /**
   * Other replicas may ask this one to confirm Downs on {@code port} from the next renewal on, at
   * {@code --advertise-address} ({@code POD_IP}); without that address it is never asked.
   */
  void advertise(int port) {
    if (shards.advertiseAddress() == null) {
      LOG.warn("no --advertise-address or POD_IP: other replicas will not ask this one to confirm");
      return;
    }
    address = CheckerReport.address(shards.advertiseAddress(), port);
    LOG.info("confirming other zones' Downs at {}", address);
  }
}
