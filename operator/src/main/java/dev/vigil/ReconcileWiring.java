package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.api.v1alpha1.BackendPoolSpec;
import dev.vigil.ops.LeaderLease;
import dev.vigil.ops.Leadership;
import dev.vigil.reconcile.BackendPoolReconciler;
import dev.vigil.reconcile.HealthPolicyReconciler;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.shard.ShardOwner;
import dev.vigil.targets.DnsLookup;
import dev.vigil.targets.TargetResolver;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ConfigurationServiceOverrider;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of JOSDK: the two reconcilers, the operator that runs them, and, unsharded, the leader
 * Lease that elects the one replica that reconciles (sharded, every replica reconciles its own
 * pools, and the leader Lease elects the sharder instead: see {@link ShardingWiring}).
 */
final class ReconcileWiring {
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileWiring.class);

  final Operator operator;

  /** Null unless this replica stands for leader through JOSDK (leader election on, unsharded). */
  final LeaderLease leaderLease;

  ReconcileWiring(
      StartOptions o,
      MeterRegistry registry,
      Leadership leadership,
      PoolRuntimes runtimes,
      PublishingWiring publishing,
      PublishingWiring.Publishers publishers,
      ShardingWiring sharding,
      Lifecycle lifecycle) {
    OperatorConfig config = o.config;
    boolean sharded = sharding.enabled();
    BackendPoolReconciler pools =
        poolReconciler(o, runtimes, publishing, publishers, sharding, lifecycle);
    if (sharded) {
      publishers.status.ownedBy(sharding.identity());
    }
    HealthPolicyReconciler policies =
        new HealthPolicyReconciler(
            runtimes,
            publishing.policyStatus(),
            o.clock,
            sharded ? sharding.identity() : null,
            new dev.vigil.reconcile.ProbeTlsSources<>(config.floors().probeTlsSecrets()));
    leaderLease = electsLeader(config) ? leaderLease(o, publishing.budget, lifecycle) : null;
    operator = new Operator(c -> configure(c, o, registry, leadership, runtimes));
    Set<String> namespaces = config.namespaces();
    operator.register(policies, c -> watching(c, namespaces));
    operator.register(
        pools,
        c -> {
          watching(c, namespaces);
          if (sharded) {
            ShardOwner.configure(c, sharding.identity());
          }
        });
  }

  private static BackendPoolReconciler poolReconciler(
      StartOptions o,
      PoolRuntimes runtimes,
      PublishingWiring publishing,
      PublishingWiring.Publishers publishers,
      ShardingWiring sharding,
      Lifecycle lifecycle) {
    return new BackendPoolReconciler(
        runtimes,
        publishing.sources,
        publishers.pools(),
        publishers.status,
        publishers.slices,
        o.clock,
        sharding.handoff,
        o.config.floors(),
        targets(o, publishing, lifecycle));
  }

  /** Resolves hostname targets ({@code --dns-server}, else /etc/resolv.conf's nameservers). */
  private static TargetResolver targets(
      StartOptions o, PublishingWiring publishing, Lifecycle lifecycle) {
    TargetResolver resolver =
        new TargetResolver(
            new DnsLookup(o.config.targets().dnsServer()),
            o.clock,
            BackendPoolSpec.MAX_HOSTNAMES,
            o.config.targets().refused());
    resolver.onChange(publishing.sources::targetsChanged);
    lifecycle.on(Stage.PROBES, "the DNS resolver of hostname targets", resolver::close);
    return resolver;
  }

  /** A controller watches the configured namespaces; none configured: all. */
  private static void watching(ControllerConfigurationOverrider<?> c, Set<String> namespaces) {
    if (!namespaces.isEmpty()) {
      c.settingNamespaces(namespaces);
    }
  }

  /**
   * JOSDK's settings: no server-side apply for primaries (the mock server of the ITs has none), no
   * CRD check (ClusterCheck did it), the client stays open, and the leader Lease when elected:
   * lost, the probes stop and {@code onFenced} runs.
   */
  private void configure(
      ConfigurationServiceOverrider c,
      StartOptions o,
      MeterRegistry registry,
      Leadership leadership,
      PoolRuntimes runtimes) {
    c.withKubernetesClient(o.client)
        .withUseSSAToPatchPrimaryResource(false)
        .checkingCRDAndValidateLocalModel(false)
        .withCloseClientOnStop(false)
        .withMetrics(MicrometerMetricsV2.newBuilder(registry).build());
    if (leaderLease != null) {
      c.withLeaderElectionConfiguration(
          leaderLease.configuration(
              leadership,
              () -> LOG.info("leading: probing and publishing"),
              () -> {
                LOG.warn("lost the leader Lease: stopping probes");
                runtimes.closeAll();
                o.onFenced.run();
              }));
    }
  }

  /**
   * With sharding, every replica reconciles (its own pools): JOSDK's election is off and the leader
   * Lease elects the sharder instead (ShardRing).
   */
  static boolean electsLeader(OperatorConfig config) {
    return config.leader().election() && !config.shards().enabled();
  }

  /**
   * The leader Lease: told first that a stop is a stop, not a lost Lease (no exit), and released
   * last, once this replica no longer probes or writes its pools.
   */
  private static LeaderLease leaderLease(
      StartOptions o, dev.vigil.publish.WriteBudget budget, Lifecycle lifecycle) {
    OperatorConfig.Leader leader = o.config.leader();
    LeaderLease lease =
        new LeaderLease(
            o.client,
            budget,
            leader.leaseNamespace(),
            leader.leaseName(),
            o.election.identity(),
            o.election.timing());
    lifecycle.on(Stage.INPUT, "the leader Lease's election", lease::stopping);
    lifecycle.on(Stage.LEASES, "the leader Lease", lease::release);
    return lease;
  }

  /** Starts the informers and reconcilers, once no sharded Vigil runs beside this one. */
  void start(StartOptions o, Lifecycle lifecycle) {
    if (leaderLease != null && !leaderLease.awaitNoShardedInstall(o.clock, 2_000)) {
      throw new IllegalStateException("interrupted while a sharded Vigil runs beside this one");
    }
    lifecycle.on(Stage.RECONCILE, "the operator (informers, reconcilers)", operator::stop);
    operator.start();
  }
}
