package dev.vigil;

import dev.vigil.ops.LeaderLease;
import dev.vigil.probe.Prober;
import dev.vigil.security.Reviewer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * What {@link Vigil#start} needs: the settings, the API server's client and the Vert.x instance,
 * and optional parts a cluster, the demo and the tests set differently. {@code
 * StartOptions.of(config, client, vertx).meters(m).election(e)}.
 */
public final class StartOptions {
  final OperatorConfig config;
  final KubernetesClient client;
  final Vertx vertx;
  Reviewer reviewer;
  MeterRegistry meters;
  LongSupplier clock = System::currentTimeMillis;
  Runnable onFenced = () -> {};
  Election election = Election.DEFAULTS;
  UnaryOperator<Prober> network = p -> p;

  private StartOptions(OperatorConfig config, KubernetesClient client, Vertx vertx) {
    this.config = config;
    this.client = client;
    this.vertx = vertx;
  }

  /**
   * The same code path for a cluster, the demo's embedded API server, and the tests. Unless told
   * otherwise: reporters reviewed by TokenReview and SubjectAccessReview through {@code client},
   * meters in a Prometheus registry, the system clock, leader election as in a cluster, and a lost
   * Lease only stops the probes.
   */
  public static StartOptions of(OperatorConfig config, KubernetesClient client, Vertx vertx) {
    return new StartOptions(config, client, vertx);
  }

  /** Who reviews outcome reporters (tests answer reviews apart from the API server). */
  public StartOptions reviewer(Reviewer reviewer) {
    this.reviewer = reviewer;
    return this;
  }

  /**
   * Where metrics go; /metrics serves them when this is a {@link PrometheusMeterRegistry},
   * otherwise /metrics serves a Prometheus registry of its own and every meter goes to both.
   */
  public StartOptions meters(MeterRegistry meters) {
    this.meters = meters;
    return this;
  }

  public StartOptions clock(LongSupplier clock) {
    this.clock = clock;
    return this;
  }

  /**
   * Runs after this replica lost its Lease (the leader Lease unsharded, its shard Lease sharded)
   * and stopped its probes. In a cluster: exit, so the kubelet restarts it clean (JOSDK's advice);
   * tests and the demo must never call System.exit.
   */
  public StartOptions onFenced(Runnable onFenced) {
    this.onFenced = onFenced;
    return this;
  }

  /**
   * What this replica's own network does to its probes: the probers as they are in a cluster; a
   * test wraps them to break one replica's network and not the others' (docs/design.md §8).
   */
  public StartOptions network(UnaryOperator<Prober> network) {
    this.network = network;
    return this;
  }

  /** Leader election's identity and timing (used only when leader election is on). */
  public StartOptions election(Election election) {
    this.election = election;
    return this;
  }

  /**
   * Who this replica is in leader election, and the Lease's timing. {@link #DEFAULTS} is what a
   * cluster runs: {@link LeaderLease.Timing#DEFAULTS} (Lease 15 s, renew deadline 10 s, retry 750
   * ms) and JOSDK's identity (the HOSTNAME variable, the Pod's name). Two replicas in one JVM
   * (LeaderElectionIT) need an identity each: with one HOSTNAME both would hold the same Lease and
   * both would lead.
   *
   * @param identity null: JOSDK's (HOSTNAME, else a random UUID)
   */
  public record Election(
      String identity, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
    public static final Election DEFAULTS =
        new Election(
            null,
            LeaderLease.Timing.DEFAULTS.leaseDuration(),
            LeaderLease.Timing.DEFAULTS.renewDeadline(),
            LeaderLease.Timing.DEFAULTS.retryPeriod());

    LeaderLease.Timing timing() {
      return new LeaderLease.Timing(leaseDuration, renewDeadline, retryPeriod);
    }
  }
}
