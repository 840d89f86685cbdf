package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.OperatorConfig;
import dev.vigil.Vigil;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.health.Origin;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The fast path from a verdict to the slice (docs/design.md §3), with the real operator on the
 * Fabric8 mock server in CRUD mode: every request the server sees is logged with its arrival time,
 * and the server can be told to answer status writes and Events slowly, or slice writes with an
 * error.
 */
class FastPathIT {
  private static final long INTERVAL = 300;
  private static final long TIMEOUT = 250;
  private static final String NS = "shop";

  /** The User-Agent of this test's own client: every other request is the operator's. */
  private static final String TEST_AGENT = "fast-path-it-observer";

  /** One request as the mock server saw it, with the User-Agent that sent it. */
  record Seen(long atMs, String method, String path, String agent) {
    boolean isRead() {
      return method.equals("GET") && !path.contains("watch=true");
    }

    boolean isSliceWrite() {
      return !method.equals("GET") && path.contains("/endpointslices");
    }

    boolean isStatusWrite() {
      return method.equals("PUT") && path.contains("/backendpools/") && path.contains("/status");
    }
  }

  /** CRUD with expectations, plus a request log, slow answers and injected failures. */
  static final class Recording extends KubernetesMixedDispatcher {
    final List<Seen> log = new CopyOnWriteArrayList<>();
    volatile long statusDelayMs;
    volatile long eventDelayMs;
    volatile boolean failSliceWrites;

    Recording(Map<ServerRequest, Queue<ServerResponse>> expectations) {
      super(expectations);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      Seen seen =
          new Seen(
              System.currentTimeMillis(),
              request.getMethod(),
              request.getPath(),
              request.getHeader("User-Agent"));
      log.add(seen);
      if (failSliceWrites && seen.isSliceWrite()) {
        return new MockResponse()
            .setResponseCode(500)
            .setBody(
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                    + "\"reason\":\"InternalError\",\"code\":500,"
                    + "\"message\":\"etcdserver: request timed out\"}");
      }
      MockResponse response = super.dispatch(request);
      if (statusDelayMs > 0 && seen.isStatusWrite()) {
        response.setBodyDelay(Duration.ofMillis(statusDelayMs));
      }
      if (eventDelayMs > 0 && seen.method().equals("POST") && seen.path().contains("/events")) {
        response.setBodyDelay(Duration.ofMillis(eventDelayMs));
      }
      return response;
    }

    List<Seen> since(long atMs) {
      return log.stream().filter(s -> s.atMs() >= atMs).toList();
    }
  }

  private Recording dispatcher;

  @AutoClose
  private final MockCluster cluster =
      MockCluster.start(
          expectations -> {
            dispatcher = new Recording(expectations);
            return dispatcher;
          });

  @AutoClose
  private final KubernetesClient client =
      cluster.newClient(config -> config.withUserAgent(TEST_AGENT));

  private Vigil.Running operator;
  private SimpleMeterRegistry meters;
  private final List<DemoBackend> backends = new ArrayList<>();
  private final int port = cluster.port();

  private void startOperator(double qps, int burst) {
    // One retry of a failed request (Fabric8 retries 5xx answers with backoff, 10 times by
    // default), so an injected 500 reaches the operator within a test's patience.
    KubernetesClient own = cluster.newClient(config -> config.withRequestRetryBackoffLimit(1));
    MockCluster.Replica replica =
        cluster.operator(
            own, MockCluster.config(NS, "--api-qps=" + qps, "--api-burst=" + burst), o -> o);
    operator = replica.running();
    meters = replica.meters();
  }

  private void startOperator() {
    startOperator(OperatorConfig.DEFAULT_API_QPS, OperatorConfig.DEFAULT_API_BURST);
  }

  private void backends(String app, int n, int firstHost) {
    for (int i = 0; i < n; i++) {
      DemoBackend b = cluster.backend("127.0.0." + (firstHost + i));
      backends.add(b);
      client.resource(Fixtures.pod(NS, app + "-" + i, app, b.host())).create();
    }
  }

  private void webPool(int n) {
    client.resource(Fixtures.policy(NS, "fast", INTERVAL + "ms", TIMEOUT + "ms")).create();
    backends("web", n, 10);
    client.resource(Fixtures.pool(NS, "web", "fast", "web", port)).create();
  }

  private List<EndpointSlice> slices(String service) {
    return client
        .discovery()
        .v1()
        .endpointSlices()
        .inNamespace(NS)
        .withLabel("kubernetes.io/service-name", service)
        .withLabel("endpointslice.kubernetes.io/managed-by", "vigil.dev")
        .list()
        .getItems();
  }

  private Set<String> readyIps(String service) {
    Set<String> ready = new TreeSet<>();
    for (EndpointSlice s : slices(service)) {
      for (Endpoint e : s.getEndpoints()) {
        if (Boolean.TRUE.equals(e.getConditions().getReady())) {
          ready.add(e.getAddresses().get(0));
        }
      }
    }
    return ready;
  }

  private Set<String> hosts(int from, int to) {
    Set<String> out = new TreeSet<>();
    for (int i = from; i < to; i++) {
      out.add(backends.get(i).host());
    }
    return out;
  }

  private Condition ready(String pool) {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName(pool).get();
    if (p == null || p.getStatus() == null || p.getStatus().getConditions() == null) {
      return null;
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private boolean readyReason(String pool, String reason) {
    Condition c = ready(pool);
    return c != null && reason.equals(c.getReason());
  }

  private void awaitSettled(String pool, int available) {
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () -> {
              BackendPool p =
                  client.resources(BackendPool.class).inNamespace(NS).withName(pool).get();
              // the probe budget's first plan writes status.detection up to a second later: a
              // write of its own, which must not fall into a window that counts writes
              return p.getStatus() != null
                  && p.getStatus().getAvailable() != null
                  && p.getStatus().getAvailable() == available
                  && p.getStatus().getDetection() != null;
            });
  }

  private void set(int backend, Mode mode) {
    backends.get(backend).set(mode).toCompletionStage().toCompletableFuture().join();
  }

  private PoolRuntime runtime(String pool) {
    return operator.runtimes().get(new PoolKey(NS, pool)).orElseThrow();
  }

  @Test
  void aTransitionIsPublishedWithZeroApiReads() throws Exception {
    webPool(3);
    startOperator();
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps("web").size() == 3);
    awaitSettled("web", 3);
    Thread.sleep(500);

    long from = System.currentTimeMillis();
    set(1, Mode.REFUSE);
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> readyIps("web").equals(Set.of(backends.get(0).host(), backends.get(2).host())));
    awaitSettled("web", 2);
    Thread.sleep(1_500);

    // The test's own GETs (slices, pool) are told apart by their User-Agent, not by their path:
    // a read by the operator of the same slices or the same pool counts.
    List<Seen> window = dispatcher.since(from);
    List<Seen> sliceWrites = window.stream().filter(Seen::isSliceWrite).toList();
    assertThat(sliceWrites).as("slice writes for one transition").hasSize(1);
    assertThat(sliceWrites.get(0).method()).isEqualTo("PUT");
    assertThat(window.stream().filter(Seen::isStatusWrite).toList())
        .as("status writes for one transition")
        .hasSize(1);
    assertThat(window.stream().filter(Seen::isRead).filter(s -> TEST_AGENT.equals(s.agent())))
        .as("the test's own reads are seen (else the agent filter below proves nothing)")
        .isNotEmpty();
    assertThat(operatorReads(window)).as("reads by the operator").isEmpty();
  }

  /** Every read in the window not sent by this test's client. */
  private static List<Seen> operatorReads(List<Seen> window) {
    return window.stream().filter(Seen::isRead).filter(s -> !TEST_AGENT.equals(s.agent())).toList();
  }

  /** BackendPool reconciles JOSDK started so far (its micrometer metrics). */
  private double poolReconciles() {
    return meters.getMeters().stream()
        .filter(m -> m.getId().getName().contains("reconciliations"))
        .filter(m -> m.getId().getName().contains("started"))
        .filter(m -> m.getId().getTags().stream().anyMatch(t -> t.getValue().equals("backendpool")))
        .flatMap(m -> java.util.stream.StreamSupport.stream(m.measure().spliterator(), false))
        .mapToDouble(io.micrometer.core.instrument.Measurement::getValue)
        .sum();
  }

  @Test
  void aPolicyStatusWriteReconcilesNoPoolButASpecEditReconcilesThemAll() throws Exception {
    client.resource(Fixtures.policy(NS, "fast", INTERVAL + "ms", TIMEOUT + "ms")).create();
    for (int p = 0; p < 3; p++) {
      backends("p" + p, 1, 10 + p);
      client.resource(Fixtures.pool(NS, "p" + p, "fast", "p" + p, port)).create();
    }
    startOperator();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> readyIps("p0").size() + readyIps("p1").size() + readyIps("p2").size() == 3);
    Thread.sleep(1_500);
    double before = poolReconciles();
    assertThat(before).as("reconciles counted at all").isGreaterThan(0);

    for (int i = 0; i < 5; i++) {
      client
          .resources(HealthPolicy.class)
          .inNamespace(NS)
          .withName("fast")
          .editStatus(
              p -> {
                p.getStatus().setAvailability("status write " + System.nanoTime());
                return p;
              });
    }
    Thread.sleep(1_500);
    assertThat(poolReconciles())
        .as("pool reconciles after 5 policy status writes")
        .isEqualTo(before);

    client
        .resources(HealthPolicy.class)
        .inNamespace(NS)
        .withName("fast")
        .edit(
            p -> {
              p.getSpec().getActive().setFall(4);
              return p;
            });
    await().atMost(Duration.ofSeconds(10)).until(() -> poolReconciles() >= before + 3);
  }

  @Test
  void fiftyTransitionsWithin100MsGiveAtMostThreeSliceWrites() throws Exception {
    client
        .resource(
            Fixtures.yaml(
                """
                apiVersion: vigil.dev/v1alpha1
                kind: HealthPolicy
                metadata: {name: eject, namespace: shop}
                spec:
                  active: {protocol: HTTP, interval: 1s, timeout: 500ms, jitterPercent: 0, rise: 1, fall: 3}
                  passive:
                    consecutiveErrors: 1
                    baseEjectionTime: 60s
                    maxEjectionTime: 60s
                    maxEjectionPercent: 100
                  panicThresholdPercent: 0
                """,
                HealthPolicy.class))
        .create();
    backends("big", 60, 10);
    client.resource(Fixtures.pool(NS, "big", "eject", "big", port)).create();
    startOperator();
    await().atMost(Duration.ofSeconds(20)).until(() -> readyIps("big").size() == 60);
    awaitSettled("big", 60);
    Thread.sleep(500);

    long from = System.currentTimeMillis();
    PoolRuntime runtime = runtime("big");
    for (int i = 0; i < 50; i++) {
      runtime.onOutcome(backends.get(i).host(), false, Origin.UPSTREAM);
      if (i % 10 == 9) {
        Thread.sleep(1); // five groups: the pool's thread sees them in more than one turn
      }
    }
    long sent = System.currentTimeMillis() - from;
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> readyIps("big").equals(hosts(50, 60)));
    Thread.sleep(1_000);

    // The name's premise: 50 calls that only hand an outcome to the pool's thread, plus five 1 ms
    // sleeps, take about 10 ms (a loaded machine stretches a 1 ms sleep to 10 ms or so: 60 ms).
    // 100 ms leaves room for that and a GC pause on a loaded 2-core machine; past it the burst is
    // no burst and the write count below says nothing about coalescing.
    assertThat(sent).as("50 ejections sent within, ms").isLessThan(100);
    assertThat(runtime.view().snapshot().counts().ejected()).isEqualTo(50);
    long sliceWrites = dispatcher.since(from).stream().filter(Seen::isSliceWrite).count();
    assertThat(sliceWrites).as("slice writes for 50 transitions").isBetween(1L, 3L);
    assertThat(readyIps("big")).isEqualTo(hosts(50, 60));
  }

  @Test
  void aForeignSliceCreatedAfterPublishingStopsPublishingUntilItIsDeleted() throws Exception {
    webPool(2);
    startOperator();
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps("web").size() == 2);

    long created = System.currentTimeMillis();
    client
        .resource(
            new EndpointSliceBuilder()
                .withNewMetadata()
                .withName("web-by-hand")
                .withNamespace(NS)
                .addToLabels("kubernetes.io/service-name", "web")
                .addToLabels("endpointslice.kubernetes.io/managed-by", "someone-else")
                .endMetadata()
                .withAddressType("IPv4")
                .build())
        .create();
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readyReason("web", "ForeignEndpointSlices"));
    // The foreign slice reaches the operator by a watch event that maps it to its pool and
    // reconciles it: tens of ms. 3 s holds on a loaded 2-core machine; a refusal that waited for
    // a periodic reconcile instead (seconds to hours apart) would not. The wait above is longer,
    // so this line, not the wait, is what fails.
    assertThat(System.currentTimeMillis() - created)
        .as("ms from the foreign slice's creation to ForeignEndpointSlices")
        .isLessThan(3_000);
    assertThat(ready("web").getMessage()).contains("web-by-hand");

    String version = slices("web").get(0).getMetadata().getResourceVersion();
    long killed = System.currentTimeMillis();
    set(0, Mode.REFUSE);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> runtime("web").view().snapshot().counts().down() == 1);
    Thread.sleep(1_000);
    assertThat(dispatcher.since(killed).stream().filter(Seen::isSliceWrite))
        .as("slice writes while a foreign slice exists")
        .isEmpty();
    assertThat(slices("web").get(0).getMetadata().getResourceVersion()).isEqualTo(version);

    client.discovery().v1().endpointSlices().inNamespace(NS).withName("web-by-hand").delete();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readyIps("web").equals(Set.of(backends.get(1).host())));
    await().atMost(Duration.ofSeconds(10)).until(() -> readyReason("web", "Published"));
  }

  @Test
  void leftoverEndpointsCreatedAfterPublishingAreRefusedUntilDeleted() {
    webPool(2);
    startOperator();
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps("web").size() == 2);
    await().atMost(Duration.ofSeconds(10)).until(() -> readyReason("web", "Published"));

    client
        .resource(
            new EndpointsBuilder()
                .withNewMetadata()
                .withName("web")
                .withNamespace(NS)
                .endMetadata()
                .build())
        .create();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readyReason("web", "ForeignEndpointSlices"));
    assertThat(ready("web").getMessage()).contains("Endpoints object named web");

    client.endpoints().inNamespace(NS).withName("web").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> readyReason("web", "Published"));
  }

  @Test
  void aStatusAndEventBacklogDoesNotDelayASliceWrite() throws Exception {
    webPool(4);
    startOperator();
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps("web").size() == 4);
    awaitSettled("web", 4);

    long slow = 8_000;
    dispatcher.statusDelayMs = slow;
    dispatcher.eventDelayMs = slow;
    long from = System.currentTimeMillis();
    set(0, Mode.REFUSE);
    // the first transition's status write is now waiting for its slow answer
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> dispatcher.since(from).stream().anyMatch(Seen::isStatusWrite));
    long statusSentAt =
        dispatcher.since(from).stream().filter(Seen::isStatusWrite).findFirst().get().atMs();
    set(1, Mode.REFUSE);
    await()
        .atMost(Duration.ofSeconds(6))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> readyIps("web").equals(hosts(2, 4)));
    long sliceAt =
        dispatcher.since(statusSentAt).stream()
            .filter(Seen::isSliceWrite)
            .mapToLong(Seen::atMs)
            .max()
            .orElseThrow();
    long since =
        runtime("web").view().backends().stream()
            .filter(b -> b.member().ip().equals(backends.get(1).host()))
            .findFirst()
            .orElseThrow()
            .since();
    assertThat(sliceAt)
        .as("the second slice write came while the status write was still unanswered")
        .isLessThan(statusSentAt + slow);
    // p50 is 10-18 ms (a hop to the pool's thread, one PUT to a loopback server). 500 ms holds on
    // a loaded 2-core machine; a slice write that waited behind the slow status write or Event
    // (8 s), or behind a debounce of a second, would not.
    assertThat(sliceAt - since).as("fatal probe -> slice write, ms").isLessThan(500);
  }

  @Test
  void theWriteBudgetHoldsUnderABurst() throws Exception {
    client.resource(Fixtures.policy(NS, "fast", INTERVAL + "ms", TIMEOUT + "ms")).create();
    int pools = 12;
    for (int p = 0; p < pools; p++) {
      backends("p" + p, 2, 10 + 2 * p);
      client.resource(Fixtures.pool(NS, "p" + p, "fast", "p" + p, port)).create();
    }
    double qps = 10;
    int burst = 4;
    long from = System.currentTimeMillis();
    startOperator(qps, burst);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              for (int p = 0; p < pools; p++) {
                if (readyIps("p" + p).size() != 2) {
                  return false;
                }
              }
              return true;
            });
    Thread.sleep(1_000);
    List<Long> writes =
        dispatcher.since(from).stream()
            .filter(s -> !s.method().equals("GET"))
            .map(Seen::atMs)
            .sorted()
            .toList();
    // 12 Services + 12 slices + status writes + Events: a burst well above the budget
    assertThat(writes.size()).isGreaterThan(3 * pools);
    for (int i = 0; i < writes.size(); i++) {
      long start = writes.get(i);
      long inWindow = writes.stream().filter(t -> t >= start && t < start + 1_000).count();
      assertThat(inWindow)
          .as("writes in the second after write %d", i)
          .isLessThanOrEqualTo((long) (burst + qps) + 1);
    }
  }

  @Test
  void aFailingSliceWriteShowsPublishFailedAndRecovers() {
    webPool(2);
    startOperator();
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps("web").size() == 2);
    await().atMost(Duration.ofSeconds(10)).until(() -> readyReason("web", "Published"));

    dispatcher.failSliceWrites = true;
    set(0, Mode.REFUSE);
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readyReason("web", "PublishFailed"));
    assertThat(ready("web").getStatus()).isEqualTo("False");
    assertThat(ready("web").getMessage())
        .contains("Service shop/web")
        .contains("HTTP 500")
        .contains("etcdserver: request timed out");
    assertThat(readyIps("web")).hasSize(2);

    dispatcher.failSliceWrites = false;
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readyIps("web").equals(Set.of(backends.get(1).host())));
    await().atMost(Duration.ofSeconds(10)).until(() -> !readyReason("web", "PublishFailed"));
  }
}
