package dev.vigil.testing;

import dev.vigil.OperatorConfig;
import dev.vigil.StartOptions;
import dev.vigil.Vigil;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * What the mock-API-server ITs share: the Fabric8 mock server in CRUD mode with Vigil's CRDs, one
 * Vert.x, real loopback backends (each on its own 127.0.0.x, all on {@link #port()}, so a Pod's IP
 * is its backend), and operators started as a cluster starts them ({@link Vigil#start}), each with
 * its own client and meters. {@link #close()} stops them all, operators first.
 *
 * <p>One per test: the mock server blocks about 30 s writing a watch event to a connection a
 * stopped operator left, which would stall the next test. An IT holds it as {@code @AutoClose
 * private final MockCluster cluster = MockCluster.start();} (a new test instance, so a new cluster,
 * per test; JUnit closes it after the {@code @AfterEach} methods). An IT that must close something
 * after the operators (a review server they call) closes the cluster first itself: {@link #close()}
 * does its work once.
 */
public final class MockCluster implements AutoCloseable {
  private final EmbeddedApiServer api;
  private final Vertx vertx = Vertx.vertx();
  private final int port;
  private final List<DemoBackend> backends = new CopyOnWriteArrayList<>();
  private final List<Replica> replicas = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  /** An operator replica: its own client and meters. */
  public record Replica(
      KubernetesClient client, SimpleMeterRegistry meters, Vigil.Running running) {
    public void stop() {
      running.stop();
      client.close();
    }

    /** The active probes this replica made (vigil_probes, all results). */
    public long probes() {
      return Math.round(
          meters.find("vigil_probes").counters().stream().mapToDouble(Counter::count).sum());
    }
  }

  private MockCluster(EmbeddedApiServer api) {
    this.api = api;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static MockCluster start() {
    return new MockCluster(EmbeddedApiServer.start());
  }

  /** With a dispatcher of the test's (one that records requests, or fails some). */
  public static MockCluster start(
      Function<Map<ServerRequest, Queue<ServerResponse>>, KubernetesMixedDispatcher> dispatcher) {
    return new MockCluster(EmbeddedApiServer.start(dispatcher));
  }

  public EmbeddedApiServer api() {
    return api;
  }

  /** The test's own client of the API server. */
  public KubernetesClient client() {
    return api.client();
  }

  /** A new client of the API server, configured as the test's own but for {@code change}. */
  public KubernetesClient newClient(UnaryOperator<ConfigBuilder> change) {
    return new KubernetesClientBuilder()
        .withConfig(change.apply(new ConfigBuilder(client().getConfiguration())).build())
        .build();
  }

  public Vertx vertx() {
    return vertx;
  }

  /** The port every backend listens on, each on its own loopback address. */
  public int port() {
    return port;
  }

  public List<DemoBackend> backends() {
    return backends;
  }

  /** A started backend at {@code host}. */
  public DemoBackend backend(String host) {
    DemoBackend b = new DemoBackend(vertx, host, port);
    b.start().toCompletionStage().toCompletableFuture().join();
    backends.add(b);
    return b;
  }

  /** {@code n} backends at 127.0.0.{firstHost}.. and a running Pod {@code app-i} for each. */
  public List<DemoBackend> pods(String namespace, String app, int n, int firstHost) {
    List<DemoBackend> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      DemoBackend b = backend("127.0.0." + (firstHost + i));
      client().resource(Fixtures.pod(namespace, app + "-" + i, app, b.host())).create();
      started.add(b);
    }
    return started;
  }

  /**
   * What most ITs start an operator with: it watches {@code namespaces} (comma-separated), serves
   * no outcome intake and writes status at most every 200 ms; then the test's {@code flags}.
   */
  public static OperatorConfig config(String namespaces, String... flags) {
    List<String> all =
        new ArrayList<>(
            List.of("--namespaces=" + namespaces, "--outcome-port=-1", "--status-interval-ms=200"));
    all.addAll(List.of(flags));
    return OperatorConfig.embedded(all.toArray(String[]::new));
  }

  /**
   * A sharded replica's settings: leader Lease {@code vigil} in {@code vigil-system}, shard Leases
   * of 3 s, no move limit, status every 200 ms, the test certificate on the outcome port (a free
   * one), this shard identity and zone; then the test's {@code flags}.
   */
  public static OperatorConfig sharded(
      String namespaces, String identity, String zone, String... flags) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--namespaces=" + namespaces,
                "--leader-election=true",
                "--lease-name=vigil",
                "--lease-namespace=vigil-system",
                "--status-interval-ms=200",
                "--tls-cert-file=" + TestTls.certFile(),
                "--tls-key-file=" + TestTls.keyFile(),
                "--sharding",
                "--shard-identity=" + identity,
                "--shard-lease-duration=3",
                "--shard-move-rate=0",
                "--zone=" + zone));
    all.addAll(List.of(flags));
    return OperatorConfig.embedded(all.toArray(String[]::new));
  }

  /** Leader election as a sharded test replica stands: 3 s Lease, renewed within 2 s. */
  public static StartOptions.Election election(String identity) {
    return new StartOptions.Election(
        identity, Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(300));
  }

  /**
   * Lets JOSDK's leader election start: JOSDK checks that it may {@code create}, {@code update} and
   * {@code get} Leases with a {@code SelfSubjectRulesReview}, which CRUD mode stores and returns
   * without a status (JOSDK then fails on a null status); this answers it with the rules the
   * chart's Role grants in {@code leaseNamespace}.
   */
  public void grantLeaseRules(String leaseNamespace) {
    SelfSubjectRulesReview allowed =
        new SelfSubjectRulesReviewBuilder()
            .withNewSpec()
            .withNamespace(leaseNamespace)
            .endSpec()
            .withNewStatus()
            .withIncomplete(false)
            .withResourceRules(
                new ResourceRuleBuilder()
                    .withApiGroups("coordination.k8s.io")
                    .withResources("leases")
                    .withVerbs("get", "create", "update")
                    .build())
            .endStatus()
            .build();
    api.server()
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
        .andReturn(201, allowed)
        .always();
  }

  /** Starts an operator with its own client and meters. */
  public Replica operator(OperatorConfig config) {
    return operator(config, o -> o);
  }

  /** Starts an operator with its own client and meters, and options of the test's. */
  public Replica operator(OperatorConfig config, UnaryOperator<StartOptions> options) {
    return operator(api.newClient(), config, options);
  }

  /** Starts an operator on a client of the test's making (closed with the operator). */
  public Replica operator(
      KubernetesClient own, OperatorConfig config, UnaryOperator<StartOptions> options) {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Vigil.Running running;
    try {
      running = Vigil.start(options.apply(StartOptions.of(config, own, vertx).meters(meters)));
    } catch (RuntimeException e) {
      own.close();
      throw e;
    }
    Replica r = new Replica(own, meters, running);
    replicas.add(r);
    return r;
  }

  /** Stops a replica now (the others at {@link #close()}). */
  public void stop(Replica r) {
    if (replicas.remove(r)) {
      r.stop();
    }
  }

  /** Every ready address in the slices of {@code namespace}. */
  public Set<String> readyIps(String namespace) {
    return addresses(namespace, null, true);
  }

  /** Every address in the slices of {@code service}; only the ready ones with {@code ready}. */
  public Set<String> addresses(String namespace, String service, boolean ready) {
    Set<String> out = new TreeSet<>();
    endpoints(namespace, service)
        .forEach(
            (address, e) -> {
              if (!ready || Boolean.TRUE.equals(e.getConditions().getReady())) {
                out.add(address);
              }
            });
    return out;
  }

  /** Every endpoint in the slices of {@code service} (every slice when null), by address. */
  /** The status entry of Pod {@code pod} in BackendPool {@code namespace/pool}, or null. */
  public BackendStatus backendStatus(String namespace, String pool, String pod) {
    BackendPool p =
        client().resources(BackendPool.class).inNamespace(namespace).withName(pool).get();
    if (p == null || p.getStatus() == null || p.getStatus().getBackends() == null) {
      return null;
    }
    return p.getStatus().getBackends().stream()
        .filter(s -> pod.equals(s.getPod()))
        .findFirst()
        .orElse(null);
  }

  public Map<String, Endpoint> endpoints(String namespace, String service) {
    var slices = client().discovery().v1().endpointSlices().inNamespace(namespace);
    List<EndpointSlice> items =
        (service == null ? slices : slices.withLabel("kubernetes.io/service-name", service))
            .list()
            .getItems();
    Map<String, Endpoint> out = new java.util.HashMap<>();
    for (EndpointSlice s : items) {
      for (Endpoint e : s.getEndpoints() == null ? List.<Endpoint>of() : s.getEndpoints()) {
        e.getAddresses().forEach(a -> out.put(a, e));
      }
    }
    return out;
  }

  /**
   * ready, serving, terminating of the endpoint at {@code ip} in {@code service}'s slices; empty
   * when it is not listed.
   */
  public List<Boolean> conditions(String namespace, String service, String ip) {
    Endpoint e = endpoints(namespace, service).get(ip);
    if (e == null) {
      return List.of();
    }
    var c = e.getConditions();
    return List.of(c.getReady(), c.getServing(), c.getTerminating());
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Replica r : List.copyOf(replicas)) {
      stop(r);
    }
    vertx.close().toCompletionStage().toCompletableFuture().join();
    api.close();
  }
}
