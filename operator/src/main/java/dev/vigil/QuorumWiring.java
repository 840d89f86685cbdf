package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.peer.PeerAuth;
import dev.vigil.peer.PeerClient;
import dev.vigil.peer.ServiceAccountToken;
import dev.vigil.probe.Prober;
import dev.vigil.quorum.PeerConfirmer;
import dev.vigil.quorum.VoterEndpoint;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.security.Fabric8Reviewer;
import dev.vigil.security.Reviews;
import dev.vigil.security.ServingCertificate;
import dev.vigil.shard.Voters;
import io.vertx.core.WorkerExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of calls between replicas ({@link dev.vigil.peer}) and of checker quorum over them
 * (docs/design.md §8): a replica with an outcome port that has peers (sharded, or unsharded with
 * leader election: a leader and standbys) has one {@link PeerClient} and one {@link PeerAuth}, over
 * which outcomes are forwarded ({@link RouteWiring}). A sharded one also asks voters in other zones
 * to confirm its Downs ({@link PeerConfirmer}) and answers their questions on that port ({@link
 * VoterEndpoint}), where it advertises itself on its shard Lease. Unsharded, every owner decides
 * alone; a single replica without leader election, or one without the outcome port, has no peers:
 * {@link #client} and {@link #auth} are null.
 */
final class QuorumWiring {
  private static final Logger LOG = LoggerFactory.getLogger(QuorumWiring.class);

  private final ShardingWiring sharding;
  private final VoterEndpoint voter;

  /** This replica's calls to its peers; null without peers. */
  final PeerClient client;

  /** Who may call this replica as a peer; null without peers. */
  final PeerAuth auth;

  /** Sets the runtimes' confirmer: before any pool runs. */
  QuorumWiring(
      StartOptions o,
      ShardingWiring sharding,
      PoolRuntimes runtimes,
      Prober prober,
      ServingCertificate certificate,
      Lifecycle lifecycle) {
    this.sharding = sharding;
    boolean peers = sharding.enabled() || ReconcileWiring.electsLeader(o.config);
    if (!peers || certificate == null || o.config.intake().port() < 0) {
      if (peers) {
        LOG.warn("no outcome port: this replica neither asks nor answers other replicas");
      }
      voter = null;
      client = null;
      auth = null;
      return;
    }
    client = new PeerClient(o.vertx, new ServiceAccountToken(o.client), certificate::certificate);
    auth = peerAuth(o, lifecycle);
    if (!sharding.enabled()) {
      voter = null;
      return;
    }
    runtimes.confirmWith(
        PeerConfirmer.create(
            client,
            new Voters.Checker(sharding.identity(), sharding.zone(), false),
            sharding.ring,
            key -> runtimes.get(key).map(PoolRuntime::uid).orElse(""),
            o.clock));
    voter =
        VoterEndpoint.create(
            o.vertx, o.client, prober, auth, o.config.floors(), sharding.zone(), o.clock);
    lifecycle.on(
        Stage.INPUT,
        "the voter's workers",
        () -> Lifecycle.awaitStopped(voter.close(), "the voter's workers"));
  }

  /**
   * Reviews callers' tokens for the API server's own audience (the token every Vigil Pod has) on a
   * small worker pool of its own; a caller must be the user this replica's own token belongs to.
   */
  private static PeerAuth peerAuth(StartOptions o, Lifecycle lifecycle) {
    WorkerExecutor workers = o.vertx.createSharedWorkerExecutor("vigil-peer-reviews", 2);
    lifecycle.on(
        Stage.INPUT,
        "the peers' reviews",
        () -> Lifecycle.awaitStopped(workers.close(), "the peers' reviews"));
    Reviews reviews =
        IntakeLimits.defaults()
            .reviewBudget()
            .reviews(
                o.reviewer != null ? o.reviewer : Fabric8Reviewer.forApiServer(o.client),
                workers,
                o.clock);
    return new PeerAuth(reviews, new ServiceAccountToken(o.client));
  }

  /** Answers other replicas' questions on the intake's port. */
  void serve(OutcomeIntake intake) {
    if (voter != null) {
      intake.serve(VoterEndpoint.PATH, voter::handle);
    }
  }

  /** The intake listens on {@code port}: other replicas may call this one from now on. */
  void advertise(int port) {
    if (voter != null) {
      sharding.advertise(port);
    }
  }
}
