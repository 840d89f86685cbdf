package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.ReviewBudget;
import dev.vigil.security.Reviewer;
import dev.vigil.security.ServingCertificate;
import dev.vigil.testing.TestTls;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Secure metrics: TLS on the metrics port, /metrics only for a token whose user the {@link
 * Reviewer} allows {@code get /metrics} (401 / 403 otherwise, answers cached), /healthz and /readyz
 * without a token, and in plain HTTP on the health port; made-up tokens cost a bounded number of
 * reviews per source address.
 */
class SecureMetricsTest {
  private final Vertx vertx = Vertx.vertx();
  private final HttpClient https = TestTls.client();

  /** TokenReviews asked. */
  private final AtomicInteger reviews = new AtomicInteger();

  private final List<Permission> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final java.util.concurrent.atomic.AtomicLong clock =
      new java.util.concurrent.atomic.AtomicLong(1_000_000);
  private OpsServer server;
  private int port;
  private int healthPort;

  @BeforeEach
  void setUp() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.counter("vigil_outcomes_received_total").increment();
    Reviewer access =
        new Reviewer() {
          @Override
          public Optional<Identity> authenticate(String token) {
            reviews.incrementAndGet();
            return token.equals("prometheus") || token.equals("some-pod")
                ? Optional.of(new Identity(token, "uid-" + token, List.of(), Map.of()))
                : Optional.empty();
          }

          @Override
          public boolean allows(Identity caller, Permission permission) {
            asked.add(permission);
            return caller.username().equals("prometheus");
          }
        };
    server =
        new OpsServer(
                vertx,
                registry,
                new PoolGauges(List::of, registry),
                new Heartbeat(vertx, System::nanoTime, 10_000),
                new Readiness(() -> true, () -> true, Leadership.sole()))
            .secure(
                new ServingCertificate(vertx, TestTls.certFile(), TestTls.keyFile()),
                access,
                new ReviewBudget(OpsServer.REVIEW_BUDGET.policy(), 1, 5),
                clock::get);
    port = server.listen(0).toCompletionStage().toCompletableFuture().get();
    healthPort = server.listenHealth(0).toCompletionStage().toCompletableFuture().get();
  }

  @AfterEach
  void tearDown() {
    server.close().toCompletionStage().toCompletableFuture().join();
    vertx.close().toCompletionStage().toCompletableFuture().join();
  }

  private HttpResponse<String> get(String path, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return https.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void metricsNeedAnAllowedTokenAndHealthDoesNot() throws Exception {
    assertThat(get("/metrics", null).statusCode()).isEqualTo(401);
    assertThat(get("/metrics", "forged").statusCode()).isEqualTo(401);
    HttpResponse<String> forbidden = get("/metrics", "some-pod");
    assertThat(forbidden.statusCode()).isEqualTo(403);
    assertThat(forbidden.body()).doesNotContain("vigil_");

    HttpResponse<String> allowed = get("/metrics", "prometheus");
    assertThat(allowed.statusCode()).isEqualTo(200);
    assertThat(allowed.body()).contains("vigil_outcomes_received_total");
    assertThat(get("/metrics", "prometheus").statusCode()).isEqualTo(200);
    assertThat(reviews).as("the allowed token's review is cached").hasValue(3);
    assertThat(asked)
        .as("one access review per user, for get on /metrics")
        .containsExactly(Permission.READ_METRICS, Permission.READ_METRICS);

    assertThat(get("/healthz", null).statusCode()).isEqualTo(200);
    assertThat(get("/readyz", null).statusCode()).isEqualTo(200);
  }

  @Test
  void theHealthPortServesHealthInPlainHttpAndNoMetrics() throws Exception {
    HttpClient plain = HttpClient.newHttpClient();
    java.util.function.Function<String, HttpResponse<String>> get =
        path -> {
          try {
            return plain.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + path)).build(),
                HttpResponse.BodyHandlers.ofString());
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        };
    assertThat(healthPort).isPositive().isNotEqualTo(port);
    assertThat(get.apply("/healthz").statusCode()).isEqualTo(200);
    assertThat(get.apply("/readyz").statusCode()).isEqualTo(200);
    HttpResponse<String> metrics = get.apply("/metrics");
    assertThat(metrics.statusCode()).isEqualTo(404);
    assertThat(metrics.body()).doesNotContain("vigil_outcomes");
    assertThat(reviews).as("health needs no review").hasValue(0);
  }

  @Test
  void aFloodOfMadeUpTokensCostsABoundedNumberOfTokenReviews() throws Exception {
    for (int i = 0; i < 40; i++) {
      int status = get("/metrics", "made-up-" + i).statusCode();
      assertThat(status).as("token %d", i).isEqualTo(i < 5 ? 401 : 429);
    }
    assertThat(reviews).as("TokenReviews for 40 made-up tokens: the burst of 5").hasValue(5);
    HttpResponse<String> limited = get("/metrics", "prometheus");
    assertThat(limited.statusCode()).isEqualTo(429);
    assertThat(limited.headers().firstValue("Retry-After")).hasValue("1");

    clock.addAndGet(1_000); // one more review per second
    assertThat(get("/metrics", "prometheus").statusCode()).isEqualTo(200);
    assertThat(get("/metrics", "made-up-x").statusCode())
        .as("the valid token's review was given back, so one more is allowed")
        .isEqualTo(401);
    assertThat(get("/metrics", "made-up-y").statusCode()).isEqualTo(429);
    assertThat(reviews).hasValue(7);
    assertThat(get("/metrics", "prometheus").statusCode()).as("cached: no review").isEqualTo(200);
  }

  @Test
  void plainHttpToTheSecuredPortGetsNoMetrics() throws Exception {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
      s.setSoTimeout(5_000);
      s.getOutputStream()
          .write(
              "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      String answer;
      try {
        answer =
            new String(
                s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
      } catch (java.io.IOException reset) {
        answer = "";
      }
      assertThat(answer).doesNotContain("vigil_").doesNotContain("HTTP/1.1 200");
    }
  }
}
