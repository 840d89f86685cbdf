package dev.vigil.e2e;

import dev.vigil.OperatorConfig;
import dev.vigil.StartOptions;
import dev.vigil.Vigil;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real operator ({@link Vigil#start}) in the test JVM, with its own Vert.x and its own client
 * that authenticates as the chart's ServiceAccount: every call it makes is checked by the chart's
 * RBAC. {@link #close()} stops it as a shut-down replica would stop.
 */
public final class InProcessOperator implements RunningOperator {
  private final KubernetesClient client;
  private final Vertx vertx;
  private Vigil.Running running;

  private InProcessOperator(KubernetesClient client, Vertx vertx, Vigil.Running running) {
    this.client = client;
    this.vertx = vertx;
    this.running = running;
  }

  /**
   * Starts an operator watching {@code namespace} as {@code vigil-system/vigil}.
   *
   * @param leaseName null: no leader election; else the Lease in the release namespace
   */
  public static InProcessOperator start(E2eCluster cluster, String namespace, String leaseName) {
    return startAs(E2eCluster.RELEASE, cluster, namespace, leaseName, -1);
  }

  /** As {@link #start}, with the outcome intake on {@code outcomePort} (0: a free port). */
  public static InProcessOperator start(
      E2eCluster cluster, String namespace, String leaseName, int outcomePort) {
    return startAs(E2eCluster.RELEASE, cluster, namespace, leaseName, outcomePort);
  }

  /** As {@link #start}, authenticated as {@code vigil-system/<serviceAccount>}. */
  public static InProcessOperator startAs(
      String serviceAccount,
      E2eCluster cluster,
      String namespace,
      String leaseName,
      int outcomePort) {
    OperatorConfig config =
        config(
            namespace,
            "--outcome-port=" + outcomePort,
            "--leader-election=" + (leaseName != null),
            "--lease-name=" + (leaseName == null ? "vigil-leader" : leaseName),
            "--tls-cert-file=" + TestTls.certFile(),
            "--tls-key-file=" + TestTls.keyFile());
    return start(cluster, serviceAccount, config);
  }

  /**
   * As the chart's ServiceAccount, with the outcome port's certificate from {@code tlsDir} ({@code
   * tls.crt}, {@code tls.key}: re-read as a mounted Secret would be) and secure metrics.
   */
  public static InProcessOperator startSecure(
      E2eCluster cluster, String namespace, java.nio.file.Path tlsDir) {
    OperatorConfig config =
        config(
            namespace,
            "--lease-name=vigil-leader",
            "--tls-cert-file=" + tlsDir.resolve("tls.crt"),
            "--tls-key-file=" + tlsDir.resolve("tls.key"),
            "--metrics-auth=true",
            "--health-port=0");
    return start(cluster, E2eCluster.RELEASE, config);
  }

  /**
   * Everything on, as the chart runs it: leader election with {@code leaseName}, the outcome intake
   * and secure metrics with the test CA's certificate, the plain health port (all on free ports),
   * as the chart's ServiceAccount.
   */
  public static InProcessOperator startEverything(
      E2eCluster cluster, String namespace, String leaseName) {
    OperatorConfig config =
        config(
            namespace,
            "--leader-election=true",
            "--lease-name=" + leaseName,
            "--tls-cert-file=" + TestTls.certFile(),
            "--tls-key-file=" + TestTls.keyFile(),
            "--metrics-auth=true",
            "--health-port=0");
    return start(cluster, E2eCluster.RELEASE, config);
  }

  /** As {@link #start} (no leader election, no intake), with the test's {@code flags}. */
  public static InProcessOperator startWith(E2eCluster cluster, String namespace, String... flags) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--outcome-port=-1",
                "--leader-election=false",
                "--lease-name=vigil-leader",
                "--tls-cert-file=" + TestTls.certFile(),
                "--tls-key-file=" + TestTls.keyFile()));
    all.addAll(List.of(flags));
    return start(cluster, E2eCluster.RELEASE, config(namespace, all.toArray(String[]::new)));
  }

  /**
   * Embedded settings in the release's namespace, watching {@code namespace}, and {@code flags}.
   */
  private static OperatorConfig config(String namespace, String... flags) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--namespaces=" + namespace,
                "--lease-namespace=" + E2eCluster.RELEASE_NAMESPACE,
                "--status-interval-ms=200"));
    all.addAll(List.of(flags));
    return OperatorConfig.embedded(all.toArray(String[]::new));
  }

  private static InProcessOperator start(
      E2eCluster cluster, String serviceAccount, OperatorConfig config) {
    return startAs(cluster, E2eCluster.RELEASE_NAMESPACE, serviceAccount, config);
  }

  /** Starts an operator with {@code config}, authenticated as {@code namespace/serviceAccount}. */
  public static InProcessOperator startAs(
      E2eCluster cluster, String namespace, String serviceAccount, OperatorConfig config) {
    KubernetesClient client = cluster.clientAs(namespace, serviceAccount);
    Vertx vertx = Vertx.vertx();
    try {
      Vigil.Running running =
          Vigil.start(StartOptions.of(config, client, vertx).meters(new SimpleMeterRegistry()));
      return new InProcessOperator(client, vertx, running);
    } catch (RuntimeException e) {
      vertx.close();
      client.close();
      throw e;
    }
  }

  /** The port of /metrics, /healthz and /readyz. */
  public int metricsPort() {
    return running.ops().port();
  }

  /** The plain-HTTP port of /healthz and /readyz, or -1 when off. */
  public int healthPort() {
    return running.ops().healthPort();
  }

  public KubernetesClient client() {
    return client;
  }

  /** The port the outcome intake listens on (all addresses; tests use 127.0.0.1). */
  public int outcomePort() {
    return running.outcomePort();
  }

  /** None: this operator logs into the test JVM, where {@link OperatorLog} reads it. */
  @Override
  public List<String> forbidden() {
    return List.of();
  }

  @Override
  public synchronized void close() {
    if (running == null) {
      return;
    }
    try {
      running.stop();
    } finally {
      running = null;
      client.close();
      vertx.close().toCompletionStage().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS);
    }
  }
}
