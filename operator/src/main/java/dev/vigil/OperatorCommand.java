package dev.vigil;

import dev.vigil.ops.LogFormat;
import dev.vigil.shard.ShardConfig;
import dev.vigil.shard.ShardLease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigil operator}: parses the flags, checks the API server, starts the operator with {@link
 * Vigil#start} and runs until the JVM stops.
 */
public final class OperatorCommand {
  private static final Logger LOG = LoggerFactory.getLogger(OperatorCommand.class);

  /** Exit code of a usage error (a bad flag or variable). */
  public static final int USAGE = 2;

  private OperatorCommand() {}

  /** Runs the operator until the JVM stops; returns only when it cannot start. */
  public static int run(List<String> args, Map<String, String> env) throws InterruptedException {
    OperatorConfig config;
    try {
      config = OperatorConfig.parse(args, env);
    } catch (OperatorConfig.InvalidConfigException e) {
      System.err.println("vigil: " + e.getMessage());
      System.err.println("run 'vigil operator --help' for the flags");
      return USAGE;
    }
    boolean debug = config.launch().debug();
    LogFormat.apply(config.launch().logFormat());
    KubernetesClient client;
    try {
      client = new KubernetesClientBuilder().build();
    } catch (RuntimeException e) {
      return cannotStart("vigil: cannot read the Kubernetes client configuration: " + e, e, debug);
    }
    Optional<ClusterCheck.Failure> failure = checkCluster(client, config, env);
    if (failure.isPresent()) {
      client.close();
      return cannotStart(failure.get().message(), failure.get().cause(), debug);
    }
    logSettings(client, config);
    Vertx vertx = vertx(config.launch().nativeTransport());
    Vigil.Running running;
    try {
      running =
          Vigil.start(
              StartOptions.of(config, client, vertx)
                  .meters(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
                  .onFenced(OperatorCommand::exitToRestart));
    } catch (RuntimeException e) {
      return cannotStart("vigil: could not start: " + e.getMessage(), e, debug);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(running::stop, "vigil-shutdown"));
    Thread.currentThread().join();
    return 0;
  }

  /** Whether the API server answers and serves Vigil's CRDs, within the deadline for here. */
  private static Optional<ClusterCheck.Failure> checkCluster(
      KubernetesClient client, OperatorConfig config, Map<String, String> env) {
    return new ClusterCheck(
            client.getConfiguration(),
            ClusterCheck.source(client.getConfiguration(), env),
            config,
            ClusterCheck.deadline(client.getConfiguration(), env))
        .run();
  }

  private static void logSettings(KubernetesClient client, OperatorConfig config) {
    OperatorConfig.Leader leader = config.leader();
    LOG.info(
        "API server {} answers and serves Vigil's CRDs; leader election {}",
        client.getConfiguration().getMasterUrl(),
        leader.election()
            ? "on (Lease " + leader.leaseNamespace() + "/" + leader.leaseName() + ")"
            : "off");
    ShardConfig shards = config.shards();
    if (shards.enabled()) {
      LOG.info(
          "sharding on: shard {} (Lease {}/{}), ring {}; the leader Lease elects the sharder",
          shards.identity(),
          shards.namespace(),
          ShardLease.leaseName(shards.identity()),
          shards.ring());
    }
  }

  private static Vertx vertx(boolean nativeTransport) {
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(nativeTransport));
    LOG.info(
        "network transport: {}",
        vertx.isNativeTransportEnabled()
            ? "epoll"
            : nativeTransport
                ? "NIO (epoll unavailable: " + vertx.unavailableNativeTransportCause() + ")"
                : "NIO");
    return vertx;
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
}
