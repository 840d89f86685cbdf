package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.probe.Prober;
import dev.vigil.quorum.PeerConfirmer;
import dev.vigil.quorum.VoterEndpoint;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.security.Fabric8Reviewer;
import dev.vigil.security.ServingCertificate;
import dev.vigil.shard.Voters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of checker quorum between replicas (docs/design.md §8): a sharded replica with an
 * outcome port asks voters in other zones to confirm its Downs ({@link PeerConfirmer}) and answers
 * their questions on that port ({@link VoterEndpoint}), where it advertises itself on its shard
 * Lease. Unsharded, or without the outcome port, every owner decides alone.
 */
final class QuorumWiring {
  private static final Logger LOG = LoggerFactory.getLogger(QuorumWiring.class);

  private final ShardingWiring sharding;
  private final VoterEndpoint voter;

  /** Sets the runtimes' confirmer: before any pool runs. */
  QuorumWiring(
      StartOptions o,
      ShardingWiring sharding,
      PoolRuntimes runtimes,
      Prober prober,
      ServingCertificate certificate,
      Lifecycle lifecycle) {
    this.sharding = sharding;
    if (!sharding.enabled() || certificate == null || o.config.intake().port() < 0) {
      if (sharding.enabled()) {
        LOG.warn("no outcome port: this replica neither asks nor answers other zones' checkers");
      }
      voter = null;
      return;
    }
    runtimes.confirmWith(
        PeerConfirmer.create(
            o.vertx,
            o.client,
            new Voters.Checker(sharding.identity(), sharding.zone(), false),
            sharding.ring,
            key -> runtimes.get(key).map(PoolRuntime::uid).orElse(""),
            certificate::certificate,
            o.clock));
    voter =
        VoterEndpoint.create(
            o.vertx,
            o.client,
            prober,
            o.reviewer != null ? o.reviewer : Fabric8Reviewer.forApiServer(o.client),
            o.config.floors(),
            sharding.zone(),
            o.clock);
    lifecycle.on(
        Stage.INPUT,
        "the voter's workers",
        () -> Lifecycle.awaitStopped(voter.close(), "the voter's workers"));
  }

  /** Answers other replicas' questions on the intake's port. */
  void serve(OutcomeIntake intake) {
    if (voter != null) {
      intake.serve(VoterEndpoint.PATH, voter::handle);
    }
  }

  /** The intake listens on {@code port}: other replicas may ask this one from now on. */
  void advertise(int port) {
    if (voter != null) {
      sharding.advertise(port);
    }
  }
}
