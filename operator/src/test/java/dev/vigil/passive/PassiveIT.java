package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.OperatorConfig;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.security.Fabric8Reviewer;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.ReviewStubs;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributes;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The real operator on the mock API server (CRUD mode) with real loopback backends, and a reporter
 * that sends outcomes over HTTP. TokenReview and SubjectAccessReview go through the Fabric8
 * reviewer to a second mock server whose answers the test writes: token {@code envoy} is {@code
 * system:serviceaccount:shop:envoy}, allowed to create {@code backendpools/outcomes} in {@code
 * shop}; token {@code stranger} is a valid account with no such permission.
 */
class PassiveIT {
  private static final String REPORTER = "system:serviceaccount:shop:envoy";
  private static final Map<String, String> TOKENS =
      Map.of(
          "envoy",
          REPORTER,
          "stranger",
          "system:serviceaccount:other:stranger",
          "api-token",
          REPORTER);

  /** Tokens minted for the API server's audience only (not projected for Vigil). */
  private static final Set<String> API_AUDIENCE_ONLY = Set.of("api-token");

  private static final String API_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private KubernetesMockServer reviewServer;
  private KubernetesClient reviewClient;
  private final List<List<String>> audiencesAsked =
      java.util.Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger tokenReviews = new AtomicInteger();
  private final AtomicInteger accessReviews = new AtomicInteger();
  private final String ns = "shop";
  private SimpleMeterRegistry meters;
  private MockCluster.Replica operator;
  private List<DemoBackend> backends;
  private final HttpClient http = TestTls.client();

  @BeforeEach
  void setUp() throws Exception {
    reviewServer = new KubernetesMockServer(false);
    reviewServer.init(InetAddress.getLoopbackAddress(), 0);
    ReviewStubs.tokenReviews(
        reviewServer,
        review -> {
          tokenReviews.incrementAndGet();
          String token = review.getSpec().getToken();
          String user = TOKENS.get(token);
          // As the API server does: the token's audiences that the review asked for; none
          // in common, not authenticated.
          List<String> audiences =
              API_AUDIENCE_ONLY.contains(token) ? List.of(API_AUDIENCE) : List.of("vigil.dev");
          List<String> asked =
              review.getSpec().getAudiences() == null || review.getSpec().getAudiences().isEmpty()
                  ? List.of(API_AUDIENCE)
                  : review.getSpec().getAudiences();
          List<String> common = audiences.stream().filter(asked::contains).toList();
          audiencesAsked.add(asked);
          return user == null || common.isEmpty()
              ? new TokenReviewStatusBuilder().withAuthenticated(false).build()
              : new TokenReviewStatusBuilder()
                  .withAuthenticated(true)
                  .withAudiences(common)
                  .withNewUser()
                  .withUsername(user)
                  .withUid("uid-" + user)
                  .withGroups("system:serviceaccounts")
                  .endUser()
                  .build();
        });
    ReviewStubs.accessReviews(
        reviewServer,
        review -> {
          accessReviews.incrementAndGet();
          ResourceAttributes a = review.getSpec().getResourceAttributes();
          boolean allowed =
              REPORTER.equals(review.getSpec().getUser())
                  && "create".equals(a.getVerb())
                  && "vigil.dev".equals(a.getGroup())
                  && "backendpools".equals(a.getResource())
                  && "outcomes".equals(a.getSubresource())
                  && ns.equals(a.getNamespace())
                  && "web".equals(a.getName());
          return new SubjectAccessReviewStatusBuilder().withAllowed(allowed).build();
        });
    reviewClient = reviewServer.createClient();
  }

  /** The operators first: they call the review server until they stop. */
  @AfterEach
  void tearDown() {
    cluster.close();
    reviewClient.close();
    reviewServer.destroy();
  }

  private void start(int n) {
    start(n, 200, 25);
  }

  private void start(int n, long statusIntervalMs, int maxEjectionPercent) {
    var policy = Fixtures.policy(ns, "fast", "300ms", "250ms");
    policy.getSpec().getPassive().setMaxEjectionPercent(maxEjectionPercent);
    client.resource(policy).create();
    backends = cluster.pods(ns, "web", n, 10);
    client.resource(Fixtures.pool(ns, "web", "fast", "web", cluster.port())).create();
    operator =
        cluster.operator(
            OperatorConfig.embedded(
                "--namespaces=" + ns,
                "--status-interval-ms=" + statusIntervalMs,
                "--tls-cert-file=" + TestTls.certFile(),
                "--tls-key-file=" + TestTls.keyFile()),
            o ->
                o.reviewer(
                    Fabric8Reviewer.forAudience(reviewClient, Fabric8Reviewer.DEFAULT_AUDIENCE)));
    meters = operator.meters();
    assertThat(operator.running().outcomePort()).isPositive();
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps().size() == n);
  }

  private Set<String> readyIps() {
    return cluster.readyIps(ns);
  }

  private Set<String> ipsExcept(int... out) {
    Set<String> ips = new TreeSet<>();
    for (int i = 0; i < backends.size(); i++) {
      final int k = i;
      if (IntStream.of(out).noneMatch(o -> o == k)) {
        ips.add(backends.get(i).host());
      }
    }
    return ips;
  }

  /** What a proxy does: sends a real request to the backend and reports what came back. */
  private String realRequest(int backend) throws Exception {
    DemoBackend b = backends.get(backend);
    HttpResponse<Void> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://" + b.host() + ":" + b.port() + "/cart"))
                .build(),
            HttpResponse.BodyHandlers.discarding());
    return "{\"namespace\":\"shop\",\"pool\":\"web\",\"backend\":\""
        + b.host()
        + ":"
        + b.port()
        + "\",\"status\":"
        + r.statusCode()
        + ",\"origin\":\"upstream\",\"latencyMs\":3}";
  }

  private HttpResponse<String> report(String token, List<String> outcomes) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create(
                    "https://127.0.0.1:"
                        + operator.running().outcomePort()
                        + OutcomeIntake.path(ns, "web")))
            .header("Content-Type", "application/x-ndjson")
            .POST(HttpRequest.BodyPublishers.ofString(String.join("\n", outcomes)));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private List<String> failures(int backend, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(realRequest(backend));
    }
    assertThat(out).allMatch(o -> o.contains("\"status\":500"));
    return out;
  }

  private List<Event> events(String reason) {
    return client.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .toList();
  }

  private BackendPool pool() {
    return client.resources(BackendPool.class).inNamespace(ns).withName("web").get();
  }

  @Test
  void aBackendThatPassesHealthzButFailsRealRequestsIsEjectedAndReturns() throws Exception {
    start(4);
    backends.get(1).set(Mode.TRAFFIC_FAILS).toCompletionStage().toCompletableFuture().join();

    HttpResponse<String> r = report("envoy", failures(1, 5));
    long reported = System.nanoTime();

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(new JsonObject(r.body()).getInteger("accepted")).isEqualTo(5);
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> readyIps().equals(ipsExcept(1)));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                events("BackendEjected").stream().anyMatch(e -> e.getMessage().contains("web-1")));
    assertThat(
            meters
                .counter(
                    "vigil_outcome_ejections_total",
                    "namespace",
                    ns,
                    "pool",
                    "web",
                    "decision",
                    "ejected")
                .count())
        .isEqualTo(1);
    assertThat(meters.counter("vigil_ejections_total", "namespace", ns, "pool", "web").count())
        .isEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                pool().getStatus().getBackends().stream()
                    .anyMatch(
                        b -> b.getPod().equals("web-1") && b.getState() == BackendState.EJECTED));

    // baseEjectionTime is 2 s; /healthz kept passing, so it comes back on its own.
    await()
        .atMost(Duration.ofSeconds(8))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readyIps().equals(ipsExcept()));
    // The ejection starts while the report is in flight, so allow for the round trip.
    assertThat(Duration.ofNanos(System.nanoTime() - reported))
        .isGreaterThanOrEqualTo(Duration.ofMillis(1_500));
    assertThat(accessReviews).as("the SubjectAccessReview is cached").hasValue(1);
  }

  /**
   * A graceful stop (SIGTERM, a rollout, a sharded replica handing its pools on) writes what the
   * accepted outcomes did before it lets go: the next owner restores from status, so a batch
   * answered 200 whose status write still waited for the status interval would be lost.
   */
  @Test
  void aBatchAcceptedJustBeforeAGracefulStopIsInStatus() throws Exception {
    start(4, 5_000, 100);
    backends.get(1).set(Mode.TRAFFIC_FAILS).toCompletionStage().toCompletableFuture().join();
    backends.get(2).set(Mode.TRAFFIC_FAILS).toCompletionStage().toCompletableFuture().join();
    assertThat(report("envoy", failures(1, 5)).statusCode()).isEqualTo(200);
    // the pool's status was just written: the next write waits for the 5 s interval
    await().atMost(Duration.ofSeconds(8)).until(() -> ejections("web-1") == 1);

    HttpResponse<String> r = report("envoy", failures(2, 5));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(new JsonObject(r.body()).getInteger("accepted")).isEqualTo(5);
    cluster.stop(operator);

    assertThat(ejections("web-2")).as("the ejection the last accepted batch made").isEqualTo(1);
    assertThat(ejections("web-1")).isEqualTo(1);
  }

  private int ejections(String pod) {
    var status = pool().getStatus();
    if (status == null || status.getBackends() == null) {
      return 0;
    }
    return status.getBackends().stream()
        .filter(b -> b.getPod().equals(pod))
        .mapToInt(b -> b.getEjections() == null ? 0 : b.getEjections())
        .sum();
  }

  @Test
  void theCapHoldsWhenSeveralBackendsMisbehaveAtOnce() throws Exception {
    start(4);
    List<String> outcomes = new ArrayList<>();
    for (int b = 1; b <= 3; b++) {
      backends.get(b).set(Mode.TRAFFIC_FAILS).toCompletionStage().toCompletableFuture().join();
      outcomes.addAll(failures(b, 5));
    }

    HttpResponse<String> r = report("envoy", outcomes);

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(new JsonObject(r.body()).getInteger("accepted")).isEqualTo(15);
    // maxEjectionPercent 25 of 4 backends: one ejection, the others refused.
    await().atMost(Duration.ofSeconds(5)).until(() -> readyIps().size() == 3);
    await().atMost(Duration.ofSeconds(5)).until(() -> !events("EjectionRefused").isEmpty());
    Thread.sleep(500);
    assertThat(readyIps()).hasSize(3);
    assertThat(meters.counter("vigil_ejections_total", "namespace", ns, "pool", "web").count())
        .isEqualTo(1);
    assertThat(
            meters.counter("vigil_ejections_refused_total", "namespace", ns, "pool", "web").count())
        .isEqualTo(2);
  }

  @Test
  void reportsWithoutAValidTokenOrPermissionChangeNothing() throws Exception {
    start(3);
    backends.get(0).set(Mode.TRAFFIC_FAILS).toCompletionStage().toCompletableFuture().join();
    List<String> outcomes = failures(0, 10);

    HttpResponse<String> none = report(null, outcomes);
    HttpResponse<String> forged = report("forged", outcomes);
    HttpResponse<String> stranger = report("stranger", outcomes);
    HttpResponse<String> apiToken = report("api-token", outcomes);

    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(forged.statusCode()).isEqualTo(401);
    assertThat(forged.body()).contains("the token was not accepted");
    assertThat(apiToken.statusCode())
        .as("a valid token minted for the API server, not for Vigil")
        .isEqualTo(401);
    assertThat(audiencesAsked)
        .isNotEmpty()
        .allSatisfy(a -> assertThat(a).containsExactly("vigil.dev"));
    assertThat(stranger.statusCode()).isEqualTo(403);
    assertThat(stranger.body())
        .contains("system:serviceaccount:other:stranger may not create backendpools/outcomes");
    assertThat(tokenReviews.get()).isEqualTo(3);
    Thread.sleep(1_500);
    assertThat(readyIps()).isEqualTo(ipsExcept());
    assertThat(events("BackendEjected")).isEmpty();
    assertThat(pool().getStatus().getEjected()).isZero();
    assertThat(
            pool().getStatus().getBackends().stream()
                .map(b -> b.getState())
                .collect(Collectors.toSet()))
        .containsOnly(BackendState.UP);
  }
}
