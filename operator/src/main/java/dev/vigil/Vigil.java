package dev.vigil;

import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.HealthPolicyStatus;
import dev.vigil.ops.CertificateAuthority;
import dev.vigil.ops.Heartbeat;
import dev.vigil.ops.LeaderLease;
import dev.vigil.ops.Leadership;
import dev.vigil.ops.LogFormat;
import dev.vigil.ops.MeteredProber;
import dev.vigil.ops.MeteredWriteCounter;
import dev.vigil.ops.MetricsAccess;
import dev.vigil.ops.OpsServer;
import dev.vigil.ops.PoolGauges;
import dev.vigil.ops.Readiness;
import dev.vigil.ops.ServingCertificate;
import dev.vigil.ops.TlsWarmUp;
import dev.vigil.passive.Fabric8Reviewer;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.passive.Reviewer;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.Prober;
import dev.vigil.probe.ProtocolProber;
import dev.vigil.probe.VertxTimers;
import dev.vigil.publish.EndpointSliceWriter;
import dev.vigil.publish.EventRecorder;
import dev.vigil.publish.EventWriter;
import dev.vigil.publish.PoolStatusPublisher;
import dev.vigil.publish.ServiceWriter;
import dev.vigil.publish.SlicePublisher;
import dev.vigil.publish.StatusWriter;
import dev.vigil.publish.TransitionReporter;
import dev.vigil.publish.WriteBudget;
import dev.vigil.publish.WriteCounter;
import dev.vigil.reconcile.BackendPoolReconciler;
import dev.vigil.reconcile.HealthPolicyReconciler;
import dev.vigil.reconcile.PoolSources;
import dev.vigil.reconcile.PublishingPlanner;
import dev.vigil.reconcile.TenantFloors;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.PoolView;
import dev.vigil.runtime.ScheduledProbing;
import dev.vigil.runtime.VertxProbeLanes;
import dev.vigil.shard.PoolHandoff;
import dev.vigil.shard.ShardConfig;
import dev.vigil.shard.ShardOwner;
import dev.vigil.shard.ShardRing;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Vigil's entry point, and the one place that wires objects together. */
public final class Vigil {
  private static final Logger LOG = LoggerFactory.getLogger(Vigil.class);
  private static final long HEARTBEAT_STALE_MS = 10_000;
  private static final long CERTIFICATE_CHECK_MS = 10_000;
  // Slice writes block a thread for one API round trip; 8 keep ~400 writes/s in flight at 20 ms.
  private static final int SLICE_WRITERS = 8;
  private static final int STATUS_WRITERS = 2;
  // A pool's slice writes start at least this far apart; changes in between are merged.
  private static final long SLICE_BATCH_MS = 100;

  private Vigil() {}

  public static void main(String[] args) throws Exception {
    int code =
        VigilCommand.run(
            List.of(args),
            System.out,
            System.err,
            new VigilCommand.Subcommands() {
              @Override
              public int operator(List<String> rest) throws InterruptedException {
                return runOperator(rest);
              }

              @Override
              public int demo(List<String> rest) {
                return dev.vigil.demo.DemoCommand.run(rest, System.out, System.err);
              }

              @Override
              public int replay(List<String> rest) throws java.io.IOException {
                return dev.vigil.replay.ReplayCommand.run(
                    rest,
                    new java.io.BufferedReader(
                        new java.io.InputStreamReader(
                            System.in, java.nio.charset.StandardCharsets.UTF_8)),
                    System.out,
                    System.err);
              }

              @Override
              public int why(List<String> rest) {
                return dev.vigil.inspect.InspectCommand.standard().why(rest);
              }

              @Override
              public int top(List<String> rest) {
                return dev.vigil.inspect.InspectCommand.standard().top(rest);
              }
            });
    System.exit(code);
  }

  /** Runs the operator until the JVM stops; returns only when it cannot start. */
  private static int runOperator(List<String> args) throws InterruptedException {
    OperatorConfig config;
    ShardConfig shards;
    TenantFloors floors;
    boolean debug;
    boolean nativeTransport;
    try {
      config = OperatorConfig.parse(args, System.getenv());
      shards = OperatorConfig.sharding(args, System.getenv(), config.leaseNamespace());
      floors = OperatorConfig.floors(args, System.getenv());
      debug = OperatorConfig.debug(args, System.getenv());
      nativeTransport = OperatorConfig.nativeTransport(args, System.getenv());
    } catch (OperatorConfig.InvalidConfigException e) {
      System.err.println("vigil: " + e.getMessage());
      System.err.println("run 'vigil operator --help' for the flags");
      return VigilCommand.USAGE;
    }
    LogFormat.apply(config.logFormat());
    KubernetesClient client;
    try {
      client = new KubernetesClientBuilder().build();
    } catch (RuntimeException e) {
      return cannotStart("vigil: cannot read the Kubernetes client configuration: " + e, e, debug);
    }
    java.util.Optional<ClusterCheck.Failure> failure =
        new ClusterCheck(
                client.getConfiguration(),
                ClusterCheck.source(client.getConfiguration(), System.getenv()),
                config,
                ClusterCheck.deadline(client.getConfiguration(), System.getenv()))
            .run();
    if (failure.isPresent()) {
      client.close();
      return cannotStart(failure.get().message(), failure.get().cause(), debug);
    }
    LOG.info(
        "API server {} answers and serves Vigil's CRDs; leader election {}",
        client.getConfiguration().getMasterUrl(),
        config.leaderElection()
            ? "on (Lease " + config.leaseNamespace() + "/" + config.leaseName() + ")"
            : "off");
    if (shards.enabled()) {
      LOG.info(
          "sharding on: shard {} (Lease {}/{}), ring {}; the leader Lease elects the sharder",
          shards.identity(),
          shards.namespace(),
          dev.vigil.shard.ShardLease.leaseName(shards.identity()),
          shards.ring());
    }
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(nativeTransport));
    LOG.info(
        "network transport: {}",
        vertx.isNativeTransportEnabled()
            ? "epoll"
            : nativeTransport
                ? "NIO (epoll unavailable: " + vertx.unavailableNativeTransportCause() + ")"
                : "NIO");
    Running running;
    try {
      running =
          start(
              config,
              shards,
              floors,
              client,
              new Fabric8Reviewer(client, config.outcomeTokenAudience()),
              vertx,
              new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
              System::currentTimeMillis,
              true,
              Election.DEFAULTS);
    } catch (RuntimeException e) {
      return cannotStart("vigil: could not start: " + e.getMessage(), e, debug);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(running::stop, "vigil-shutdown"));
    Thread.currentThread().join();
    return 0;
  }

  /**
   * Once this replica holds its shard Lease, on a thread of its own: hands over the pools whose
   * status still names this shard but that moved away while a replica of this name was down.
   */
  private static void sweepOnceWritable(
      PoolHandoff handoff, ShardRing ring, Set<String> namespaces, PoolStatusPublisher status) {
    Thread sweep =
        new Thread(
            () -> {
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
            },
            "vigil-shard-sweep");
    sweep.setDaemon(true);
    sweep.start();
  }

  /**
   * A replica that lost its Lease (the leader Lease unsharded, its shard Lease sharded) exits so
   * the kubelet restarts it clean. Not on the Lease's tick thread, and with a hard stop 30 s later:
   * ShardingE2E once saw a replica fenced while starting stay up, Ready and owning nothing, its
   * {@code System.exit} never returning (a shutdown hook waiting on something that never ended).
   */
  private static void exitToRestart() {
    Thread halt =
        new Thread(
            () -> {
              try {
                Thread.sleep(30_000);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              Runtime.getRuntime().halt(1);
            },
            "vigil-fenced-halt");
    halt.setDaemon(true);
    halt.start();
    new Thread(() -> System.exit(1), "vigil-fenced-exit").start();
  }

  /** One or two lines naming the cause; the stack trace only with --debug. */
  private static int cannotStart(String message, Throwable cause, boolean debug) {
    System.err.println(message);
    if (debug && cause != null) {
      cause.printStackTrace();
    }
    System.err.flush();
    return 1;
  }

  /** A started operator; {@link #stop()} ends probes, timers and informers. */
  public record Running(
      Operator operator,
      PoolRuntimes runtimes,
      ScheduledExecutorService events,
      Runnable flushEvents,
      ExecutorService sliceWriters,
      ScheduledExecutorService statusWriters,
      Vertx vertx,
      OutcomeIntake intake,
      int outcomePort,
      OpsServer ops,
      ShardRing ring,
      LeaderLease leaderLease,
      PoolStatusPublisher status) {
    public void stop() {
      if (leaderLease != null) {
        // a stop of the election from here on is this stop, not a lost Lease (no exit)
        leaderLease.stopping();
      }
      // First no more outcomes, then their effect into status while the informers still run:
      // the next owner restores from status, so an accepted batch is never lost (ShardingE2E).
      if (intake != null) {
        awaitStopped(intake.close(), "the outcome intake");
      }
      // (not after losing the shard Lease: a fenced replica writes nothing)
      int unwritten = ring == null || ring.lease().writable() ? status.flushAll() : 0;
      if (unwritten > 0) {
        LOG.warn("{} pools' status could not be written before stopping", unwritten);
      }
      try {
        operator.stop();
      } catch (RuntimeException e) {
        LOG.warn("stopping the operator (informers, reconcilers) failed: {}", e.toString());
      } finally {
        // The transitions of the last second still become Events, within 2 s; what the write
        // budget still holds back then is dropped (an Event is a report, not state).
        try {
          events.execute(flushEvents);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          // already stopped
        }
        events.shutdown();
        try {
          events.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        events.shutdownNow();
        sliceWriters.shutdownNow();
        statusWriters.shutdownNow();
        awaitStopped(ops.close(), "the ops server (/metrics, /healthz, /readyz)");
        awaitStopped(runtimes.closeAll(), "the pools' probes and timers");
        // last: released only once this replica no longer probes or writes its pools
        if (ring != null) {
          ring.close();
        }
        if (leaderLease != null) {
          leaderLease.release();
        }
      }
    }
  }

  /**
   * Starts the operator against an API server: the same code path for a cluster, the demo's
   * embedded API server, and the tests. Outcome reporters are reviewed with TokenReview and
   * SubjectAccessReview through the same client.
   *
   * @param meters where metrics go; /metrics serves them when this is a {@link
   *     PrometheusMeterRegistry}, otherwise /metrics serves a Prometheus registry of its own and
   *     every meter goes to both
   * @param exitOnStopLeading in a cluster, a replica that loses its Lease exits and restarts
   *     (JOSDK's advice); tests and the demo must never call System.exit
   */
  public static Running start(
      OperatorConfig config,
      KubernetesClient client,
      Vertx vertx,
      MeterRegistry meters,
      LongSupplier clock,
      boolean exitOnStopLeading) {
    return start(
        config,
        client,
        new Fabric8Reviewer(client, config.outcomeTokenAudience()),
        vertx,
        meters,
        clock,
        exitOnStopLeading);
  }

  /**
   * As {@link #start(OperatorConfig, KubernetesClient, Vertx, MeterRegistry, LongSupplier,
   * boolean)}, with the reviewer of outcome reporters given (tests answer reviews apart from the
   * API server that holds the objects).
   */
  public static Running start(
      OperatorConfig config,
      KubernetesClient client,
      Reviewer reviewer,
      Vertx vertx,
      MeterRegistry meters,
      LongSupplier clock,
      boolean exitOnStopLeading) {
    return start(
        config, client, reviewer, vertx, meters, clock, exitOnStopLeading, Election.DEFAULTS);
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
  }

  /**
   * As {@link #start(OperatorConfig, KubernetesClient, Reviewer, Vertx, MeterRegistry,
   * LongSupplier, boolean)}, with leader election's identity and timing given (used only when
   * {@code config.leaderElection()}).
   */
  public static Running start(
      OperatorConfig config,
      KubernetesClient client,
      Reviewer reviewer,
      Vertx vertx,
      MeterRegistry meters,
      LongSupplier clock,
      boolean exitOnStopLeading,
      Election election) {
    return start(
        config,
        ShardConfig.OFF,
        client,
        reviewer,
        vertx,
        meters,
        clock,
        exitOnStopLeading,
        election);
  }

  /**
   * As {@link #start(OperatorConfig, KubernetesClient, Reviewer, Vertx, MeterRegistry,
   * LongSupplier, boolean, Election)}, with scale-out settings: with {@code shards.enabled()} this
   * replica renews its shard Lease, reconciles only the pools labelled with its identity, and
   * stands for leader to run the sharder (JOSDK's leader election is then off: every replica
   * works); the election's timing applies to the leader Lease.
   */
  public static Running start(
      OperatorConfig config,
      ShardConfig shards,
      KubernetesClient client,
      Reviewer reviewer,
      Vertx vertx,
      MeterRegistry meters,
      LongSupplier clock,
      boolean exitOnStopLeading,
      Election election) {
    return start(
        config,
        shards,
        TenantFloors.NONE,
        client,
        reviewer,
        vertx,
        meters,
        clock,
        exitOnStopLeading,
        election);
  }

  /** As above, with the admin's floors for every pool's policy ({@code --min-interval} etc.). */
  public static Running start(
      OperatorConfig config,
      ShardConfig shards,
      TenantFloors floors,
      KubernetesClient client,
      Reviewer reviewer,
      Vertx vertx,
      MeterRegistry meters,
      LongSupplier clock,
      boolean exitOnStopLeading,
      Election election) {
    boolean sharded = shards.enabled();
    // with sharding, every replica reconciles (its own pools): JOSDK's election is off and the
    // leader Lease elects the sharder instead (ShardRing)
    boolean electLeader = config.leaderElection() && !sharded;
    PrometheusMeterRegistry prometheus =
        meters instanceof PrometheusMeterRegistry p
            ? p
            : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    MeterRegistry registry =
        prometheus == meters
            ? meters
            : new CompositeMeterRegistry(Clock.SYSTEM, List.of(prometheus, meters));
    WriteBudget budget = new WriteBudget(config.apiQps(), config.apiBurst(), System::nanoTime);
    ScheduledExecutorService eventThread =
        Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "vigil-events"));
    PoolSources sources = new PoolSources();
    EventRecorder events =
        new EventRecorder(new EventWriter(client, budget, sources::poolUid), "vigil", 10, 60_000);
    eventThread.scheduleWithFixedDelay(
        () -> events.flush(clock.getAsLong()), 1, 1, TimeUnit.SECONDS);
    // Slice writes and their timers (batch period, retries) share their own threads: a status or
    // Event backlog blocks other threads, never these.
    ScheduledExecutorService sliceWriters =
        Executors.newScheduledThreadPool(SLICE_WRITERS, named("vigil-slices"));
    ScheduledExecutorService statusWriters =
        Executors.newScheduledThreadPool(STATUS_WRITERS, named("vigil-status"));
    WriteCounter writes = new MeteredWriteCounter(registry);
    ProtocolProber protocols = ProtocolProber.create(vertx);
    // A cold JVM's first TLS handshakes take seconds: pay for them before the first probe round
    // (issue 18), so the first HTTPS and gRPC-over-TLS probes do not time out on healthy backends.
    TlsWarmUp.runAndWait(vertx, protocols, Duration.ofSeconds(10));
    Prober probers = new MeteredProber(protocols, registry);
    HealthWatcher watcher = protocols.watcher();
    Leadership leadership = electLeader ? Leadership.elected() : Leadership.sole();
    PoolRuntimes runtimes =
        new PoolRuntimes(
            vertx,
            (context, callback) ->
                new ScheduledProbing(
                    probers,
                    watcher,
                    new VertxTimers(context),
                    new SplittableRandom(),
                    callback,
                    VertxProbeLanes.forCores(context)),
            new TransitionReporter(events, registry),
            clock);
    java.util.function.Function<PoolKey, java.util.Optional<PoolView>> views =
        key -> runtimes.get(key).map(PoolRuntime::view);
    SlicePublisher slices =
        new SlicePublisher(
            views,
            sources::sliceCache,
            new EndpointSliceWriter(client, budget, writes),
            sliceWriters,
            sliceWriters,
            clock,
            SLICE_BATCH_MS,
            registry);
    PoolStatusPublisher status =
        new PoolStatusPublisher(
            client,
            budget,
            statusWriters,
            views,
            slices::failure,
            sources::primaries,
            clock,
            config.statusIntervalMs(),
            () -> writes.status(1));
    // The runtime's change event goes straight to the slice and status publishers (no reconcile).
    runtimes.addListener(slices);
    runtimes.addListener(status);
    slices.addFailureListener(status);
    // Sharded: the shard Lease guards every pool this replica runs. Lost, the replica stops its
    // probes (so nothing changes and nothing is written) and its reconciles run no pool; in a
    // cluster it exits and restarts clean.
    ShardRing ring =
        sharded
            ? new ShardRing(
                client,
                budget,
                shards,
                new ShardRing.Leader(
                    config.leaseName(),
                    election.leaseDuration(),
                    election.renewDeadline(),
                    election.retryPeriod()),
                config.namespaces(),
                clock,
                registry,
                () -> {
                  LOG.warn("shard Lease lost: this replica stops probing and writing");
                  leadership.fenced();
                  runtimes.closeAll();
                  if (exitOnStopLeading) {
                    exitToRestart();
                  }
                })
            : null;
    if (ring != null) {
      // per shard: each replica's /metrics shows its own share (probes/s: rate of vigil_probes)
      io.micrometer.core.instrument.Gauge.builder(
              "vigil_shard_pools", runtimes, r -> r.all().size())
          .description("BackendPools this replica owns and probes")
          .tag("shard", shards.identity())
          .register(registry);
      io.micrometer.core.instrument.Gauge.builder(
              "vigil_shard_backends",
              runtimes,
              r -> r.all().stream().mapToInt(p -> p.view().snapshot().counts().total()).sum())
          .description("Backends in the BackendPools this replica owns")
          .tag("shard", shards.identity())
          .register(registry);
    }
    PoolHandoff handoff =
        ring == null
            ? null
            : new PoolHandoff(
                client,
                shards.identity(),
                ring.lease()::writable,
                ring::state,
                clock,
                shards.leaseDurationMs());
    BackendPoolReconciler pools =
        new BackendPoolReconciler(
            runtimes,
            sources,
            new PublishingPlanner(
                new ServiceWriter(client, writes, budget, sources::serviceCache), slices),
            status,
            slices,
            clock,
            handoff,
            floors);
    if (sharded) {
      status.ownedBy(shards.identity());
    }
    HealthPolicyReconciler policies =
        new HealthPolicyReconciler(
            runtimes,
            new StatusWriter<HealthPolicyStatus, HealthPolicy>(
                clock, config.statusIntervalMs(), budget, () -> writes.status(1)),
            clock,
            sharded);
    LeaderLease leaderLease =
        electLeader
            ? new LeaderLease(
                client,
                budget,
                config.leaseNamespace(),
                config.leaseName(),
                election.identity(),
                new LeaderLease.Timing(
                    election.leaseDuration(), election.renewDeadline(), election.retryPeriod()))
            : null;
    Operator operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  .withUseSSAToPatchPrimaryResource(false)
                  .checkingCRDAndValidateLocalModel(false)
                  .withCloseClientOnStop(false)
                  .withMetrics(MicrometerMetricsV2.newBuilder(registry).build());
              if (electLeader) {
                o.withLeaderElectionConfiguration(
                    leaderLease.configuration(
                        leadership,
                        () -> LOG.info("leading: probing and publishing"),
                        () -> {
                          LOG.warn("lost the leader Lease: stopping probes");
                          runtimes.closeAll();
                          if (exitOnStopLeading) {
                            exitToRestart();
                          }
                        }));
              }
            });
    operator.register(
        policies,
        c -> {
          if (!config.namespaces().isEmpty()) {
            c.settingNamespaces(config.namespaces());
          }
        });
    Set<String> namespaces = config.namespaces();
    operator.register(
        pools,
        c -> {
          if (!namespaces.isEmpty()) {
            c.settingNamespaces(namespaces);
          }
          if (sharded) {
            ShardOwner.configure(c, shards.identity());
          }
        });
    Readiness readiness = Readiness.of(operator, leadership);
    ServingCertificate certificate =
        config.outcomePort() >= 0 || config.metricsAuth()
            ? servingCertificate(vertx, config)
            : null;
    OpsServer ops =
        new OpsServer(
            vertx,
            prometheus,
            new PoolGauges(runtimes::all, registry),
            new Heartbeat(vertx, System::nanoTime, HEARTBEAT_STALE_MS).start(),
            readiness);
    if (config.metricsAuth()) {
      ops.secure(certificate, MetricsAccess.of(client));
    }
    // What a failed start must release: nothing it opened outlives the exception.
    Runnable release =
        () -> {
          awaitStopped(ops.close(), "the ops server after a failed start");
          eventThread.shutdownNow();
          sliceWriters.shutdownNow();
          statusWriters.shutdownNow();
          if (certificate != null) {
            certificate.close();
          }
          if (ring != null) {
            ring.close();
          }
          if (leaderLease != null) {
            leaderLease.release();
          }
        };
    int port;
    int healthPort = -1;
    try {
      port = await(ops.listen(config.metricsPort()), "--metrics-port " + config.metricsPort());
      if (config.healthPort() >= 0) {
        healthPort =
            await(ops.listenHealth(config.healthPort()), "--health-port " + config.healthPort());
      }
    } catch (RuntimeException e) {
      release.run();
      throw e;
    }
    LOG.info(
        "serving /metrics{}, /healthz and /readyz on port {}{}",
        config.metricsAuth() ? " (TLS, authorized)" : "",
        port,
        healthPort < 0 ? "" : "; /healthz and /readyz (plain HTTP) on port " + healthPort);
    if (ring != null) {
      try {
        // A replica restarted under its old name may find its Lease fenced until it expires.
        if (!ring.start(Duration.ofMillis(shards.leaseDurationMs() * 2))) {
          LOG.warn("shard Lease {} not taken yet; reconciling once it is", shards.identity());
        }
        // pools moved away while a replica of this name was down wait for its handover
        sweepOnceWritable(handoff, ring, config.namespaces(), status);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        release.run();
        throw new IllegalStateException("interrupted while taking the shard Lease", e);
      }
    }
    if (leaderLease != null && !leaderLease.awaitNoShardedInstall(clock, 2_000)) {
      release.run();
      throw new IllegalStateException("interrupted while a sharded Vigil runs beside this one");
    }
    try {
      operator.start();
    } catch (RuntimeException e) {
      try {
        if (leaderLease != null) {
          leaderLease.stopping();
        }
        operator.stop();
      } catch (RuntimeException stopping) {
        e.addSuppressed(stopping);
      }
      release.run();
      throw e;
    }
    OutcomeIntake intake = null;
    int outcomePort = -1;
    if (config.outcomePort() >= 0) {
      try {
        intake =
            new OutcomeIntake(
                vertx,
                runtimes,
                reviewer,
                registry,
                IntakeLimits.defaults(),
                clock,
                sharded ? () -> false : leadership::active,
                certificate);
        outcomePort =
            await(
                intake.listen("0.0.0.0", config.outcomePort()),
                "--outcome-port " + config.outcomePort());
      } catch (RuntimeException e) {
        if (leaderLease != null) {
          leaderLease.stopping();
        }
        operator.stop();
        if (intake != null) {
          awaitStopped(intake.close(), "the outcome intake after a failed start");
        }
        release.run();
        throw e;
      }
    }
    return new Running(
        operator,
        runtimes,
        eventThread,
        () -> events.flush(clock.getAsLong()),
        sliceWriters,
        statusWriters,
        vertx,
        intake,
        outcomePort,
        ops,
        ring,
        leaderLease,
        status);
  }

  /**
   * The outcome port's certificate: the configured PEM files, re-read every 10 s (a rotated Secret
   * reaches the volume within the kubelet's sync period, about a minute), or, when none are
   * configured (tests and the demo; {@link OperatorConfig#parse} requires them), a throwaway
   * certificate for localhost from a CA that lives only in this process.
   */
  private static ServingCertificate servingCertificate(Vertx vertx, OperatorConfig config) {
    if (config.tlsCertFile() != null && config.tlsKeyFile() != null) {
      return new ServingCertificate(
              vertx, Path.of(config.tlsCertFile()), Path.of(config.tlsKeyFile()))
          .checkEvery(CERTIFICATE_CHECK_MS);
    }
    try {
      Path dir = Files.createTempDirectory("vigil-tls");
      new CertificateAuthority("vigil throwaway CA")
          .issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofDays(1))
          .writeTo(dir);
      LOG.warn("no --tls-cert-file: the outcome port serves a throwaway self-signed certificate");
      return new ServingCertificate(vertx, dir.resolve("tls.crt"), dir.resolve("tls.key"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Waits up to 10 s for a part to stop; a failure or timeout is logged, never thrown. */
  static void awaitStopped(io.vertx.core.Future<?> stopping, String what) {
    stopping
        .toCompletionStage()
        .toCompletableFuture()
        .orTimeout(10, TimeUnit.SECONDS)
        .exceptionally(
            e -> {
              Throwable cause =
                  e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                      ? e.getCause()
                      : e;
              LOG.warn("stopping {} failed: {}", what, cause.toString());
              return null;
            })
        .join();
  }

  private static <T> T await(io.vertx.core.Future<T> future, String what) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + ": interrupted", e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IllegalStateException(what + ": " + cause.getMessage(), cause);
    }
  }

  private static java.util.concurrent.ThreadFactory named(String prefix) {
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    return r -> daemon(r, prefix + "-" + n.incrementAndGet());
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
