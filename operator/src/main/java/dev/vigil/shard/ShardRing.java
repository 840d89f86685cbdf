package dev.vigil.shard;

import dev.vigil.publish.WriteBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica's part in the ring (docs/design.md §7): its own shard Lease, renewed on a thread of its
 * own, and a candidacy for the leader Lease; the leader runs the {@link Sharder}. With sharding on,
 * JOSDK's leader election is off (every replica reconciles its own pools) and this elects the
 * sharder with Fabric8's {@code LeaderElector} on the same Lease name. Every write of both Leases
 * and of the sharder takes a token of the one {@link WriteBudget}.
 */
public final class ShardRing implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShardRing.class);

  /** The leader Lease's name and timing. */
  public record Leader(
      String leaseName, Duration duration, Duration renewDeadline, Duration retry) {}

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final ShardConfig config;
  private final Leader leader;
  private final Set<String> namespaces;
  private final LongSupplier clock;
  private final MeterRegistry meters;
  private final ScheduledExecutorService timer =
      Executors.newScheduledThreadPool(
          2,
          r -> {
            Thread t = new Thread(r, "vigil-shard");
            t.setDaemon(true);
            return t;
          });
  private final ShardLease lease;
  private volatile io.fabric8.kubernetes.client.informers.SharedIndexInformer<
          io.fabric8.kubernetes.api.model.coordination.v1.Lease>
      ring;
  private volatile Sharder sharder;
  private volatile CompletableFuture<?> election;
  private volatile boolean closed;

  /**
   * @param onLost runs once when this replica must stop writing (its Lease was lost)
   * @param report what this replica's Lease carries about it as a checker (zone, failing share),
   *     asked at each renewal
   */
  public ShardRing(
      KubernetesClient client,
      WriteBudget budget,
      ShardConfig config,
      Leader leader,
      Set<String> namespaces,
      LongSupplier clock,
      MeterRegistry meters,
      Runnable onLost,
      java.util.function.Supplier<CheckerReport> report) {
    this.client = client;
    this.budget = budget;
    this.config = config;
    this.leader = leader;
    this.namespaces = namespaces;
    this.clock = clock;
    this.meters = meters;
    io.micrometer.core.instrument.Gauge.builder(
            "vigil_shard_live", this, r -> r.sharder == null ? 0 : r.sharder.liveShards())
        .description(
            "Live shards the sharder saw in its last round (0 on replicas that do not lead)")
        .register(meters);
    this.lease =
        new ShardLease(
            client,
            budget,
            config,
            config.identity(),
            clock,
            () -> {
              abdicate();
              onLost.run();
            },
            report);
  }

  /**
   * Takes this replica's shard Lease, waiting at most {@code wait} (a replica restarted under the
   * same name finds its old Lease fenced until it expires), then stands for leader.
   *
   * @return false when the Lease was not taken in time (renewal goes on in the background)
   */
  public boolean start(Duration wait) throws InterruptedException {
    ring = ShardLease.informRing(client, config);
    lease.start(timer);
    long until = System.nanoTime() + wait.toNanos();
    while (!lease.writable() && System.nanoTime() < until) {
      Thread.sleep(50);
    }
    stand();
    return lease.writable();
  }

  /** This replica's shard Lease. */
  public ShardLease lease() {
    return lease;
  }

  /**
   * A shard's state from its Lease as this replica's watch of the ring sees it now; empty until the
   * ring's Leases are listed. A shard without a Lease is {@link ShardPlanner.ShardState#GONE}.
   */
  public java.util.Optional<ShardPlanner.ShardState> state(String shard) {
    var informer = ring;
    if (informer == null || !informer.hasSynced()) {
      return java.util.Optional.empty();
    }
    var lease =
        informer.getStore().getByKey(config.namespace() + "/" + ShardLease.leaseName(shard));
    if (lease == null) {
      return java.util.Optional.of(ShardPlanner.ShardState.GONE);
    }
    return java.util.Optional.of(
        ShardLease.states(java.util.List.of(lease), clock.getAsLong())
            .getOrDefault(shard, ShardPlanner.ShardState.GONE));
  }

  /**
   * The live checkers of the ring, by name, each with its zone and Suspect flag (docs/design.md
   * §8), as this replica's watch of the ring's Leases shows them; empty until the Leases are
   * listed. Reads the informer's cache: no API call.
   */
  public java.util.List<Voters.Checker> checkers() {
    var informer = ring;
    if (informer == null || !informer.hasSynced()) {
      return java.util.List.of();
    }
    return LiveCheckers.of(informer.getStore().list(), clock.getAsLong());
  }

  /**
   * Whether this replica is Suspect now: its share on its own Lease against the other live
   * replicas' (the value every other replica sees, so all agree); false while its Lease is not live
   * in the cache or the ring is not listed yet.
   */
  public boolean selfSuspect() {
    return checkers().stream().anyMatch(c -> c.suspect() && c.name().equals(config.identity()));
  }

  /** The sharder while this replica leads, else null. */
  public Sharder sharder() {
    return sharder;
  }

  private synchronized void stand() {
    if (closed) {
      return;
    }
    election =
        client
            .leaderElector()
            .withConfig(
                new LeaderElectionConfigBuilder()
                    .withName("vigil-sharder")
                    .withLock(
                        new BudgetedLeaseLock(
                            new LeaseLock(
                                config.namespace(), leader.leaseName(), config.identity()),
                            budget))
                    .withLeaseDuration(leader.duration())
                    .withRenewDeadline(leader.renewDeadline())
                    .withRetryPeriod(leader.retry())
                    .withReleaseOnCancel(true)
                    .withLeaderCallbacks(
                        new LeaderCallbacks(this::lead, this::stopLeading, who -> {}))
                    .build())
            .build()
            .start();
    // a lost leadership ends the elector; stand again (unless closing)
    election.whenComplete((v, e) -> timer.schedule(this::stand, 1, TimeUnit.SECONDS));
  }

  private synchronized void lead() {
    if (closed || sharder != null) {
      return;
    }
    LOG.info("{} leads: sharding pools over the ring {}", config.identity(), config.ring());
    sharder = new Sharder(client, budget, config, namespaces, clock, meters).start(timer);
  }

  private synchronized void stopLeading() {
    if (sharder != null) {
      LOG.info("{} stopped leading: sharder stopped", config.identity());
      sharder.stop();
      sharder = null;
    }
  }

  /** A fenced replica neither shards nor stands for leader again. */
  private void abdicate() {
    synchronized (this) {
      closed = true;
    }
    CompletableFuture<?> e = election;
    if (e != null) {
      e.cancel(true);
    }
    stopLeading();
  }

  /** Stops sharding and releases both Leases (a graceful stop: pools move at once). */
  @Override
  public void close() {
    abdicate();
    var informer = ring;
    if (informer != null) {
      informer.stop();
    }
    lease.release();
    timer.shutdownNow();
  }
}
