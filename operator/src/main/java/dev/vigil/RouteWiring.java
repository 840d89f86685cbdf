package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.passive.ForwardEndpoint;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.passive.OutcomeRoute;
import dev.vigil.passive.OutcomeRoute.Location;
import dev.vigil.passive.RouteLimits;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.shard.PoolDirectory;
import dev.vigil.shard.ShardRing;
import dev.vigil.shard.Voters;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;

/**
 * The wiring of routing outcomes between replicas (docs/passive.md, "Routing between replicas"):
 * sharded, with the peers' client and auth ({@link QuorumWiring}), a replica forwards a pool's
 * outcomes to the owner its {@link PoolDirectory} names, at the address that owner's shard Lease
 * carries, and takes other replicas' forwards on its outcome port. Unsharded (one replica, or a
 * leader and standbys), outcomes go to this replica's runtimes only: a standby answers 503 as
 * before.
 */
final class RouteWiring {
  final OutcomeRoute route;

  RouteWiring(
      StartOptions o,
      ShardingWiring sharding,
      QuorumWiring peers,
      PoolRuntimes runtimes,
      MeterRegistry registry,
      Lifecycle lifecycle) {
    if (!sharding.enabled() || peers.client == null) {
      route = OutcomeRoute.local(o.vertx, runtimes, registry);
      return;
    }
    PoolDirectory directory = new PoolDirectory(o.client, o.config.namespaces()).start();
    lifecycle.on(Stage.RECONCILE, "the pools' directory", directory::close);
    route =
        OutcomeRoute.sharded(
            o.vertx,
            runtimes,
            pool -> locate(pool, directory, sharding.ring, sharding.identity()),
            peers.client,
            peers.auth,
            sharding.identity(),
            RouteLimits.defaults(),
            IntakeLimits.defaults(),
            registry,
            o.clock);
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

  /** Takes other replicas' forwards on the intake's port. */
  void serve(OutcomeIntake intake) {
    ForwardEndpoint endpoint = route.endpoint();
    if (endpoint != null) {
      intake.serve(ForwardEndpoint.PATH, endpoint::handle);
    }
  }
}
