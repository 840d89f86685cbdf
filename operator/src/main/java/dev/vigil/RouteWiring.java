package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.ops.LeaderAddress;
import dev.vigil.ops.LeaderLease;
import dev.vigil.passive.ForwardEndpoint;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.passive.OutcomeRoute;
import dev.vigil.passive.OutcomeRoute.Location;
import dev.vigil.passive.OutcomeRoute.Owners;
import dev.vigil.passive.RouteLimits;
import dev.vigil.publish.WriteBudget;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.shard.CheckerReport;
import dev.vigil.shard.PoolDirectory;
import dev.vigil.shard.ShardRing;
import dev.vigil.shard.Voters;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of routing outcomes between replicas (docs/passive.md, "Routing between replicas"),
 * with the peers' client and auth ({@link QuorumWiring}); a replica takes other replicas' forwards
 * on its outcome port. Sharded, a replica forwards a pool's outcomes to the owner its {@link
 * PoolDirectory} names, at the address that owner's shard Lease carries. Unsharded with leader
 * election, a standby forwards every pool's outcomes to the leader, at the address the leader wrote
 * on the leader Lease ({@link LeaderAddress}). A single replica without leader election applies
 * outcomes to its own runtimes only.
 */
final class RouteWiring {
  private static final Logger LOG = LoggerFactory.getLogger(RouteWiring.class);

  final OutcomeRoute route;

  /** Unsharded with leader election: the leader's address on its Lease; null otherwise. */
  private final LeaderAddress leader;

  private final String advertiseAddress;

  /**
   * @param leaderLease this replica's leader Lease when unsharded with leader election; else null
   */
  RouteWiring(
      StartOptions o,
      ShardingWiring sharding,
      QuorumWiring peers,
      LeaderLease leaderLease,
      WriteBudget budget,
      PoolRuntimes runtimes,
      MeterRegistry registry,
      Lifecycle lifecycle) {
    advertiseAddress = o.config.shards().advertiseAddress();
    if (peers.client == null || (!sharding.enabled() && leaderLease == null)) {
      route = OutcomeRoute.local(o.vertx, runtimes, registry);
      leader = null;
      return;
    }
    PoolDirectory directory = new PoolDirectory(o.client, o.config.namespaces()).start();
    lifecycle.on(Stage.RECONCILE, "the pools' directory", directory::close);
    Owners owners;
    String self;
    if (sharding.enabled()) {
      leader = null;
      self = sharding.identity();
      owners = pool -> locate(pool, directory, sharding.ring, self);
    } else {
      OperatorConfig.Leader lease = o.config.leader();
      leader =
          new LeaderAddress(
                  o.client,
                  budget,
                  lease.leaseNamespace(),
                  lease.leaseName(),
                  leaderLease.identity(),
                  o.clock)
              .start();
      lifecycle.on(Stage.RECONCILE, "the leader Lease's watch", leader::close);
      self = leaderLease.identity();
      owners = pool -> locateLeader(pool, directory, leader);
    }
    route =
        OutcomeRoute.sharded(
            o.vertx,
            runtimes,
            owners,
            peers.client,
            peers.auth,
            self,
            RouteLimits.defaults(),
            IntakeLimits.defaults(),
            registry,
            o.clock);
  }

  /**
   * Unsharded: where a pool that does not run here runs: at the leader, when another replica holds
   * a live leader Lease with its address on it; none when the pool does not exist; unknown while
   * the pools are not listed yet, while no leader is known, or while this replica leads (the pool
   * is arriving).
   */
  static Location locateLeader(PoolKey pool, PoolDirectory directory, LeaderAddress leader) {
    if (directory.owner(pool.namespace(), pool.name()).isEmpty()) {
      return directory.synced() ? Location.NONE : Location.UNKNOWN;
    }
    String at = leader.leaderElsewhere();
    return at.isEmpty() ? Location.UNKNOWN : Location.at(at);
  }

  /**
   * Where a pool that does not run here runs: its label's shard, at the address on that shard's
   * live Lease; unknown while that is this replica (the pool is arriving), while no shard is
   * assigned, or while the owner's Lease is not live or carries no address.
   */
  static Location locate(PoolKey pool, PoolDirectory directory, ShardRing ring, String self) {
    Optional<String> owner = directory.owner(pool.namespace(), pool.name());
    if (owner.isEmpty()) {
      return directory.synced() ? Location.NONE : Location.UNKNOWN;
    }
    if (owner.get().isEmpty() || owner.get().equals(self)) {
      return Location.UNKNOWN;
    }
    for (Voters.Checker c : ring.checkers()) {
      if (c.name().equals(owner.get()) && !c.address().isEmpty()) {
        return Location.at(c.address());
      }
    }
    return Location.UNKNOWN;
  }

  /**
   * The intake listens on {@code port}: unsharded with leader election, this replica's address goes
   * on the leader Lease whenever it leads ({@code --advertise-address}, {@code POD_IP}).
   */
  void advertise(int port) {
    if (leader == null) {
      return;
    }
    if (advertiseAddress == null) {
      LOG.warn(
          "no --advertise-address or POD_IP: while this replica leads, standbys cannot forward"
              + " outcomes to it (they answer 503 not_delivered)");
      return;
    }
    leader.advertise(CheckerReport.address(advertiseAddress, port));
  }

  /** Takes other replicas' forwards on the intake's port. */
  void serve(OutcomeIntake intake) {
    ForwardEndpoint endpoint = route.endpoint();
    if (endpoint != null) {
      intake.serve(ForwardEndpoint.PATH, endpoint::handle);
    }
  }
}
