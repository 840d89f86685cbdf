package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.ops.Leadership;
import dev.vigil.ops.MeteredProber;
import dev.vigil.ops.OpsServer;
import dev.vigil.ops.ProbeBudgetGauges;
import dev.vigil.ops.Readiness;
import dev.vigil.ops.TlsWarmUp;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.Prober;
import dev.vigil.probe.ProtocolProber;
import dev.vigil.probe.ScheduledProbing;
import dev.vigil.probe.VertxProbeLanes;
import dev.vigil.probe.VertxTimers;
import dev.vigil.probe.agent.AgentProber;
import dev.vigil.probe.grpc.GrpcProber;
import dev.vigil.probe.http.Http2Prober;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.tcp.TcpProber;
import dev.vigil.publish.TransitionReporter;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.ProbeBudgets;
import dev.vigil.security.Fabric8Reviewer;
import dev.vigil.security.Reviewer;
import dev.vigil.security.ServingCertificate;
import dev.vigil.shard.ShardRing;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Starts the operator: the one place that wires objects together, concern by concern ({@link
 * PublishingWiring}, {@link ShardingWiring}, {@link ReconcileWiring}, {@link OpsWiring}, the probes
 * and the outcome intake here), each registering what it opens with one {@link Lifecycle}, which
 * both a stop and a failed start run.
 */
public final class Vigil {
  private Vigil() {}

  /**
   * A started operator; {@link #stop()} ends intake, informers, writers, probes, then Leases.
   *
   * @param ring this replica's shard ring; null unsharded
   * @param outcomePort the outcome intake's port; -1 when off
   * @param stopping the {@link Lifecycle}'s stop
   */
  public record Running(
      Operator operator,
      PoolRuntimes runtimes,
      OpsServer ops,
      ShardRing ring,
      int outcomePort,
      Runnable stopping) {
    public void stop() {
      stopping.run();
    }
  }

  /**
   * Starts the operator against an API server. What a failed start opened is released, in the order
   * of a stop, before the exception leaves.
   */
  public static Running start(StartOptions o) {
    Lifecycle lifecycle = new Lifecycle();
    try {
      return wire(o, lifecycle);
    } catch (RuntimeException e) {
      lifecycle.stop();
      throw e;
    }
  }

  private static Running wire(StartOptions o, Lifecycle lifecycle) {
    OperatorConfig config = o.config;
    PrometheusMeterRegistry prometheus =
        o.meters instanceof PrometheusMeterRegistry p
            ? p
            : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MeterRegistry registry =
        o.meters == null || prometheus == o.meters
            ? prometheus
            : new CompositeMeterRegistry(Clock.SYSTEM, List.of(prometheus, o.meters));
    Leadership leadership =
        ReconcileWiring.electsLeader(config) ? Leadership.elected() : Leadership.sole();
    PublishingWiring publishing = new PublishingWiring(o, registry, lifecycle);
    ProtocolProber protocols = protocols(o);
    Prober probers = new MeteredProber(o.network.apply(protocols), registry);
    PoolRuntimes runtimes =
        runtimes(
            o, probers, protocols.watcher(), publishing.transitions(registry), registry, lifecycle);
    ShardingWiring sharding =
        new ShardingWiring(o, publishing.budget, leadership, runtimes, registry, lifecycle);
    PublishingWiring.Publishers publishers =
        publishing.publishers(runtimes, registry, sharding::mayWrite, lifecycle);
    ReconcileWiring reconcile =
        new ReconcileWiring(
            o, registry, leadership, runtimes, publishing, publishers, sharding, lifecycle);
    OpsWiring ops =
        new OpsWiring(
            o,
            prometheus,
            registry,
            runtimes,
            Readiness.of(reconcile.operator, leadership),
            lifecycle);
    QuorumWiring quorum =
        new QuorumWiring(o, sharding, runtimes, probers, ops.certificate, lifecycle);
    sharding.start(config.namespaces(), publishers.status);
    reconcile.start(o, lifecycle);
    int outcomePort = -1;
    if (config.intake().port() >= 0) {
      RouteWiring routes =
          new RouteWiring(
              o,
              sharding,
              quorum,
              reconcile.leaderLease,
              publishing.budget,
              runtimes,
              registry,
              lifecycle);
      outcomePort =
          startIntake(
              o,
              registry,
              runtimes,
              sharding,
              quorum,
              routes,
              leadership,
              ops.certificate,
              lifecycle);
    }
    return new Running(
        reconcile.operator, runtimes, ops.server, sharding.ring, outcomePort, lifecycle::stop);
  }

  /** Every protocol's prober, warmed up; all network I/O on {@code vertx}. */
  private static ProtocolProber protocols(StartOptions o) {
    ProtocolProber protocols =
        new ProtocolProber(
            new HttpProber(o.vertx, o.config.launch().probeSource()),
            new TcpProber(o.vertx, o.config.launch().probeSource()),
            new GrpcProber(o.vertx, o.config.launch().probeSource()),
            new Http2Prober(o.vertx, o.config.launch().probeSource()));
    // A cold JVM's first TLS handshakes take seconds: pay for them before the first probe round
    // (issue 18), so the first HTTPS and gRPC-over-TLS probes do not time out on healthy backends.
    TlsWarmUp.runAndWait(o.vertx, protocols, Duration.ofSeconds(10));
    return protocols;
  }

  /** The pools' runtimes and their probes. */
  private static PoolRuntimes runtimes(
      StartOptions o,
      Prober probers,
      HealthWatcher watcher,
      TransitionReporter transitions,
      MeterRegistry registry,
      Lifecycle lifecycle) {
    AgentProber agents = new AgentProber(o.vertx);
    PoolRuntimes runtimes =
        new PoolRuntimes(
            o.vertx,
            (context, callback) ->
                new ScheduledProbing(
                    probers,
                    watcher,
                    new VertxTimers(context),
                    new SplittableRandom(),
                    callback,
                    VertxProbeLanes.forCores(context),
                    agents),
            transitions,
            o.clock);
    lifecycle.on(
        Stage.PROBES,
        "the pools' probes and timers",
        () ->
            Lifecycle.awaitStopped(
                runtimes.closeAll().eventually(agents::close), "the pools' probes and timers"));
    ProbeBudgets budgets = new ProbeBudgets(o.config.launch().probeBudget(), runtimes::all);
    ProbeBudgetGauges.register(registry, budgets);
    long replan = o.vertx.setPeriodic(1000, id -> budgets.replan());
    lifecycle.on(Stage.PROBES, "the probe budget", () -> o.vertx.cancelTimer(replan));
    return runtimes;
  }

  /**
   * The outcome intake, on its own port; returns the port. Closed first on a stop: no more
   * outcomes, then their effect into status while the informers still run.
   */
  private static int startIntake(
      StartOptions o,
      MeterRegistry registry,
      PoolRuntimes runtimes,
      ShardingWiring sharding,
      QuorumWiring quorum,
      RouteWiring routes,
      Leadership leadership,
      ServingCertificate certificate,
      Lifecycle lifecycle) {
    Reviewer reviewer =
        o.reviewer != null
            ? o.reviewer
            : Fabric8Reviewer.forAudience(o.client, o.config.intake().tokenAudience());
    OutcomeIntake intake =
        new OutcomeIntake(
            o.vertx,
            routes.route,
            reviewer,
            registry,
            IntakeLimits.defaults(),
            o.clock,
            sharding.enabled() ? () -> false : leadership::active,
            certificate,
            OtlpWiring.clientCertificates(o));
    lifecycle.on(
        Stage.INPUT,
        "the outcome intake",
        () -> Lifecycle.awaitStopped(intake.close(), "the outcome intake"));
    quorum.serve(intake);
    routes.serve(intake);
    OtlpWiring.receive(o, intake, registry, lifecycle);
    int port = o.config.intake().port();
    int bound = Lifecycle.awaitStarted(intake.listen("0.0.0.0", port), "--outcome-port " + port);
    quorum.advertise(bound);
    routes.advertise(bound);
    return bound;
  }
}
