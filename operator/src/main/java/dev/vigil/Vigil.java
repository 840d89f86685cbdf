package dev.vigil;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.HealthPolicyStatus;
import dev.vigil.passive.Fabric8Reviewer;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.passive.Reviewer;
import dev.vigil.probe.ProtocolProber;
import dev.vigil.probe.VertxTimers;
import dev.vigil.reconcile.BackendPoolReconciler;
import dev.vigil.reconcile.EndpointSliceWriter;
import dev.vigil.reconcile.EventRecorder;
import dev.vigil.reconcile.HealthPolicyReconciler;
import dev.vigil.reconcile.PoolPublisher;
import dev.vigil.reconcile.PoolSources;
import dev.vigil.reconcile.ServiceWriter;
import dev.vigil.reconcile.StatusWriter;
import dev.vigil.reconcile.TransitionReporter;
import dev.vigil.reconcile.WriteCounter;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.ScheduledProbing;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Vigil's entry point, and the one place that wires objects together. */
public final class Vigil {
  private static final Logger LOG = LoggerFactory.getLogger(Vigil.class);

  private Vigil() {}

  public static void main(String[] args) throws Exception {
    String command = args.length == 0 ? "operator" : args[0];
    List<String> rest = Arrays.asList(args).subList(Math.min(1, args.length), args.length);
    switch (command) {
      case "operator" -> runOperator(rest);
      case "demo" -> System.exit(dev.vigil.demo.DemoCommand.run(rest, System.out, System.err));
      case "replay" ->
          System.exit(
              dev.vigil.replay.ReplayCommand.run(
                  rest,
                  new java.io.BufferedReader(
                      new java.io.InputStreamReader(
                          System.in, java.nio.charset.StandardCharsets.UTF_8)),
                  System.out,
                  System.err));
      default -> {
        System.err.println("usage: vigil operator|demo|replay [flags]");
        System.exit(2);
      }
    }
  }

  private static void runOperator(List<String> args) throws InterruptedException {
    OperatorConfig config;
    try {
      config = OperatorConfig.parse(args, System.getenv());
    } catch (OperatorConfig.InvalidConfigException e) {
      System.err.println("vigil: " + e.getMessage());
      System.exit(2);
      return;
    }
    KubernetesClient client = new KubernetesClientBuilder().build();
    Vertx vertx = Vertx.vertx();
    Running running =
        start(config, client, vertx, new SimpleMeterRegistry(), System::currentTimeMillis, true);
    Runtime.getRuntime().addShutdownHook(new Thread(running::stop, "vigil-shutdown"));
    Thread.currentThread().join();
  }

  /** A started operator; {@link #stop()} ends probes, timers and informers. */
  public record Running(
      Operator operator,
      PoolRuntimes runtimes,
      ScheduledExecutorService events,
      Vertx vertx,
      OutcomeIntake intake,
      int outcomePort) {
    public void stop() {
      try {
        operator.stop();
      } finally {
        if (intake != null) {
          intake
              .close()
              .toCompletionStage()
              .toCompletableFuture()
              .orTimeout(10, TimeUnit.SECONDS)
              .exceptionally(e -> null)
              .join();
        }
        events.shutdownNow();
        runtimes
            .closeAll()
            .toCompletionStage()
            .toCompletableFuture()
            .orTimeout(10, TimeUnit.SECONDS)
            .exceptionally(e -> null)
            .join();
      }
    }
  }

  /**
   * Starts the operator against an API server: the same code path for a cluster, the demo's
   * embedded API server, and the tests. Outcome reporters are reviewed with TokenReview and
   * SubjectAccessReview through the same client.
   *
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
        config, client, new Fabric8Reviewer(client), vertx, meters, clock, exitOnStopLeading);
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
    ScheduledExecutorService eventThread =
        Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "vigil-events"));
    EventRecorder events =
        new EventRecorder(
            e -> {
              try {
                client
                    .v1()
                    .events()
                    .inNamespace(e.getMetadata().getNamespace())
                    .resource(e)
                    .create();
              } catch (RuntimeException ex) {
                LOG.warn("could not write Event {}: {}", e.getReason(), ex.getMessage());
              }
            },
            "vigil",
            10,
            60_000);
    eventThread.scheduleWithFixedDelay(
        () -> events.flush(clock.getAsLong()), 1, 1, TimeUnit.SECONDS);
    WriteCounter writes = WriteCounter.NONE;
    ProtocolProber probers = ProtocolProber.create(vertx);
    PoolRuntimes runtimes =
        new PoolRuntimes(
            vertx,
            (context, callback) ->
                new ScheduledProbing(
                    probers, new VertxTimers(context), new SplittableRandom(), callback),
            new TransitionReporter(events, meters),
            clock);
    PoolSources sources = new PoolSources();
    BackendPoolReconciler pools =
        new BackendPoolReconciler(
            runtimes,
            sources,
            new PoolPublisher(
                client,
                new EndpointSliceWriter(client, sources::sliceCache),
                new ServiceWriter(client, writes),
                writes),
            new StatusWriter<BackendPoolStatus, BackendPool>(
                clock, config.statusIntervalMs(), () -> writes.status(1)),
            clock);
    HealthPolicyReconciler policies =
        new HealthPolicyReconciler(
            runtimes,
            new StatusWriter<HealthPolicyStatus, HealthPolicy>(
                clock, config.statusIntervalMs(), () -> writes.status(1)),
            clock);
    Operator operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  .withUseSSAToPatchPrimaryResource(false)
                  .checkingCRDAndValidateLocalModel(false)
                  .withCloseClientOnStop(false);
              if (config.leaderElection()) {
                o.withLeaderElectionConfiguration(
                    LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(
                            config.leaseName())
                        .withLeaseNamespace(config.leaseNamespace())
                        .withExitOnStopLeading(exitOnStopLeading)
                        .withLeaderCallbacks(
                            new LeaderCallbacks(
                                () -> LOG.info("leading: probing and publishing"),
                                () -> {
                                  LOG.info("stopped leading: stopping probes");
                                  runtimes.closeAll();
                                },
                                leader -> LOG.info("leader is {}", leader)))
                        .build());
              }
            });
    operator.register(
        policies,
        c -> {
          if (!config.namespaces().isEmpty()) {
            c.settingNamespaces(config.namespaces());
          }
        });
    operator.register(
        pools,
        c -> {
          if (!config.namespaces().isEmpty()) {
            c.settingNamespaces(config.namespaces());
          }
        });
    operator.start();
    OutcomeIntake intake = null;
    int outcomePort = -1;
    if (config.outcomePort() >= 0) {
      intake = new OutcomeIntake(vertx, runtimes, reviewer, meters, IntakeLimits.defaults(), clock);
      try {
        outcomePort =
            intake
                .listen("0.0.0.0", config.outcomePort())
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        operator.stop();
        eventThread.shutdownNow();
        throw new IllegalStateException(
            "could not listen for outcomes on port " + config.outcomePort(), e);
      }
    }
    return new Running(operator, runtimes, eventThread, vertx, intake, outcomePort);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  static Duration seconds(long s) {
    return Duration.ofSeconds(s);
  }
}
