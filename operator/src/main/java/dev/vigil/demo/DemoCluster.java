package dev.vigil.demo;

import dev.vigil.OperatorConfig;
import dev.vigil.StartOptions;
import dev.vigil.Vigil;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The demo's world: the embedded API server, real loopback backends, Pods whose IPs are those
 * backends ({@link DemoPods}), the example policy and pool, and the real operator started with
 * {@link Vigil#start} behind TLS of its own ({@link DemoTls}); what the demo shows of the pool is
 * read back as a consumer of the API would ({@link ClusterReads}).
 */
public final class DemoCluster implements AutoCloseable {
  /** The reporter's ServiceAccount, bound to the chart's reporter role in the pool's namespace. */
  public static final String REPORTER = "demo-proxy";

  private final DemoExamples examples;
  private final EmbeddedApiServer api;
  private final Vertx vertx;
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final DemoAuthentication auth;
  private final ClusterReads reads;
  private final List<DemoBackend> backends = new ArrayList<>();
  private final List<String> podNames = new ArrayList<>();
  private final int port;
  private KubernetesClient operatorClient;
  private Vigil.Running operator;
  private DemoTls tls;

  private DemoCluster(DemoExamples examples, EmbeddedApiServer api, Vertx vertx, int port) {
    this.examples = examples;
    this.api = api;
    this.vertx = vertx;
    this.port = port;
    this.auth = new DemoAuthentication(namespace(), REPORTER);
    this.reads = new ClusterReads(api.client(), namespace(), poolName(), serviceName());
  }

  /** Starts the API server and {@code n} backends, and applies the example; no operator yet. */
  public static DemoCluster create(DemoExamples examples, int n) throws IOException {
    EmbeddedApiServer api = EmbeddedApiServer.start();
    Vertx vertx = Vertx.vertx();
    DemoCluster cluster = null;
    try {
      cluster = new DemoCluster(examples, api, vertx, freePort());
      cluster.auth.install(api.server());
      cluster.startBackends(n);
      cluster.warmUp();
      cluster.apply();
      return cluster;
    } catch (IOException | RuntimeException e) {
      if (cluster != null) {
        cluster.close();
      } else {
        vertx.close();
        api.close();
      }
      throw e;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** Backend i listens on 127.0.x.y: 127.0.0.10 onwards, 240 per third octet. */
  public static String address(int i) {
    return "127.0." + (i / 240) + "." + (10 + i % 240);
  }

  private void startBackends(int n) {
    List<Future<Void>> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      DemoBackend b = new DemoBackend(vertx, address(i), port, examples.healthPath());
      backends.add(b);
      started.add(b.start());
    }
    try {
      Future.all(started).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(
          "could not listen on 127.0.x.y:" + port + " (Linux routes all of 127/8 to loopback)", e);
    }
  }

  /**
   * A few requests over Vert.x's HTTP client before the operator starts, so a cold JVM's first
   * probes do not time out and open the demo with a false BackendDown.
   */
  private void warmUp() {
    var client = vertx.createHttpClient();
    try {
      for (int round = 0; round < 3; round++) {
        List<Future<?>> requests = new ArrayList<>();
        for (int i = 0; i < Math.min(backends.size(), 8); i++) {
          requests.add(
              client
                  .request(
                      io.vertx.core.http.HttpMethod.GET, port, address(i), examples.healthPath())
                  .compose(r -> r.send())
                  .compose(r -> r.body()));
        }
        Future.join(requests).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      // only a warm-up
    } finally {
      client.close();
    }
  }

  private void apply() {
    KubernetesClient c = api.client();
    c.resource(examples.namespace()).create();
    c.resource(examples.deployment()).create();
    DemoPods pods = new DemoPods(examples, namespace(), port);
    for (int i = 0; i < backends.size(); i++) {
      Pod pod = pods.pod(i);
      podNames.add(pod.getMetadata().getName());
      c.resource(pod).create();
    }
    c.resource(examples.policy()).create();
    c.resource(examples.pool()).create();
  }

  /** Starts the real operator against the embedded server: no leader election, never exits. */
  public void startOperator() {
    long interval = examples.intervalMs();
    long statusMs = Math.max(100, Math.min(1000, interval / 2));
    operatorClient = api.newClient();
    // The outcome port serves TLS only, as in a cluster (see DemoTls).
    tls = DemoTls.create();
    operator =
        Vigil.start(
            StartOptions.of(
                    OperatorConfig.embedded(
                        "--namespaces=" + namespace(),
                        "--lease-name=vigil-leader",
                        "--lease-namespace=" + namespace(),
                        "--status-interval-ms=" + statusMs,
                        "--tls-cert-file=" + tls.certFile(),
                        "--tls-key-file=" + tls.keyFile()),
                    operatorClient,
                    vertx)
                .meters(meters));
  }

  public Vigil.Running operator() {
    return operator;
  }

  /**
   * The CA bundle of {@link #caPem()} as a file, for a reporter of one's own ({@code curl
   * --cacert}); removed with the rest of the demo's TLS files when the demo ends.
   */
  public Path caFile() {
    return tls.caFile();
  }

  /** The CA bundle reporters trust for the outcome port (PEM). */
  public String caPem() {
    return tls.caPem();
  }

  public DemoAuthentication auth() {
    return auth;
  }

  public DemoExamples examples() {
    return examples;
  }

  public String namespace() {
    return examples.pool().getMetadata().getNamespace();
  }

  public String poolName() {
    return examples.pool().getMetadata().getName();
  }

  public String serviceName() {
    var service = examples.pool().getSpec().getService();
    return service != null && service.getName() != null ? service.getName() : poolName();
  }

  public int port() {
    return port;
  }

  public int size() {
    return backends.size();
  }

  public DemoBackend backend(int i) {
    return backends.get(i);
  }

  public String podName(int i) {
    return podNames.get(i);
  }

  /** Whether the demo keeps the backend of this Pod healthy right now (false for other Pods). */
  public boolean keepsHealthy(String pod) {
    int i = podNames.indexOf(pod);
    return i >= 0 && backends.get(i).mode() == Mode.HEALTHY;
  }

  public void set(int i, Mode mode) {
    try {
      backends.get(i).set(mode).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("could not switch " + address(i) + " to " + mode, e);
    }
  }

  // ---- reads, as a consumer of the API would make them ----------------------------------------

  /** Every endpoint of the pool's EndpointSlices: address to ready. */
  public Map<String, Boolean> endpoints() {
    return reads.endpoints();
  }

  public BackendPool pool() {
    return reads.pool();
  }

  /** The pool's Events, oldest first. */
  public List<Event> events() {
    return reads.events();
  }

  /** The runtime's view with current streaks, or null before the operator took the pool on. */
  public PoolView view() {
    if (operator == null) {
      return null;
    }
    var runtime = operator.runtimes().get(new PoolKey(namespace(), poolName()));
    if (runtime.isEmpty()) {
      return null;
    }
    try {
      return runtime
          .get()
          .freshView()
          .toCompletionStage()
          .toCompletableFuture()
          .get(1, TimeUnit.SECONDS);
    } catch (Exception e) {
      return runtime.get().view();
    }
  }

  /**
   * The operator's {@code /metrics} in the Prometheus text format, fetched over HTTP from its
   * metrics port as a scraper would; empty when that fails (the demo goes on without it).
   */
  public String scrapeMetrics() {
    URI uri = URI.create("http://127.0.0.1:" + operator.ops().port() + "/metrics");
    try {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? response.body() : "";
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /** A counter of the operator's metrics for this pool (0 until it exists). */
  public double counter(String name) {
    Counter c = meters.find(name).tag("pool", poolName()).counter();
    return c == null ? 0 : c.count();
  }

  @Override
  public void close() {
    // Each part is closed on its own and bounded: the mock server's shutdown can wait long for
    // watch connections whose peers are gone, and a demo must not hang on its way out.
    Thread closer =
        new Thread(
            () -> {
              if (operator != null) {
                try {
                  operator.stop();
                } catch (RuntimeException e) {
                  // best effort
                }
                operatorClient.close();
              }
              try {
                vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
              } catch (Exception e) {
                // best effort
              }
              api.close();
              if (tls != null) {
                tls.delete();
              }
            },
            "demo-close");
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(15_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
