package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The intake over real loopback HTTP, in front of a real pool runtime, with a fake reviewer. */
class OutcomeIntakeTest {
  private static final String TOKEN = "envoy-token";
  private static final PoolKey WEB = new PoolKey("shop", "web");
  private static final IntakeLimits LIMITS =
      IntakeLimits.defaults()
          .withMaxBodyBytes(64 * 1024)
          .withMaxItems(100)
          .withRequestTimeoutMs(700)
          .withQueuePerPool(1_000);

  private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());
  private static final String WEB_PATH = OutcomeIntake.path("shop", "web");
  private final HttpClient http = TestTls.client();
  private Vertx vertx;
  private SimpleMeterRegistry meters;
  private IntakeHarness harness;
  private PoolRuntime web;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    meters = new SimpleMeterRegistry();
    harness = new IntakeHarness(vertx, meters, LIMITS, clock::get);
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:envoy", "shop");
    harness.reviewer.user("other-token", "system:serviceaccount:other:envoy", "other");
    web = harness.pool(WEB, 3, HealthSettings.defaults());
    harness.pool(new PoolKey("shop", "secret"), 1, HealthSettings.defaults());
  }

  @AfterEach
  void tearDown() {
    harness.close();
    IntakeHarness.await(vertx.close());
  }

  /** One bad request: what is sent, and the status and message that must come back. */
  record Bad(
      String name,
      String method,
      String path,
      String token,
      String contentType,
      String body,
      int status,
      String message) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** An item that fails backend 10.0.0.1: were it applied, the backend's error run would move. */
  private static String fail(String extra) {
    return "{\"namespace\":\"shop\",\"pool\":\"web\",\"backend\":\"10.0.0.1:8080\",\"status\":503"
        + extra
        + "}";
  }

  private static Bad bad(String name, String body, int status, String message) {
    return new Bad(name, "POST", WEB_PATH, TOKEN, "application/json", body, status, message);
  }

  static Stream<Bad> badInputs() {
    String many = IntStream.range(0, 101).mapToObj(i -> fail("")).collect(Collectors.joining(","));
    return Stream.of(
        new Bad(
            "no token",
            "POST",
            WEB_PATH,
            null,
            "application/json",
            "[" + fail("") + "]",
            401,
            "Authorization: Bearer"),
        new Bad(
            "not a bearer token",
            "POST",
            WEB_PATH,
            "Basic " + TOKEN,
            "application/json",
            "[" + fail("") + "]",
            401,
            "Authorization: Bearer"),
        new Bad(
            "a token the TokenReview refuses",
            "POST",
            WEB_PATH,
            "forged",
            "application/json",
            "[" + fail("") + "]",
            401,
            "the token was not accepted"),
        new Bad(
            "no permission for the pool",
            "POST",
            WEB_PATH,
            "other-token",
            "application/json",
            "[" + fail("") + "]",
            403,
            "system:serviceaccount:other:envoy may not create backendpools/outcomes for pool"
                + " shop/web"),
        new Bad(
            "no permission for this pool of a namespace it may report for",
            "POST",
            OutcomeIntake.path("shop", "secret"),
            TOKEN,
            "application/json",
            "[" + fail("").replace("\"web\"", "\"secret\"") + "]",
            403,
            "may not create backendpools/outcomes for pool shop/secret"),
        bad(
            "an item naming another pool than the URL's",
            "[{\"namespace\":\"shop\",\"pool\":\"secret\","
                + "\"backend\":\"10.0.0.1:8080\",\"ok\":false}]",
            422,
            "the item names pool shop/secret but was posted to pool shop/web's URL"),
        new Bad(
            "wrong path",
            "POST",
            "/v1/outcome",
            TOKEN,
            "application/json",
            "[]",
            404,
            "POST /v1/namespaces/{namespace}/backendpools/{name}/outcomes"),
        new Bad(
            "the retired multi-pool path",
            "POST",
            "/v1/outcomes",
            TOKEN,
            "application/json",
            "[" + fail("") + "]",
            404,
            "the multi-pool /v1/outcomes is gone"),
        new Bad(
            "a pool name that is not a Kubernetes name",
            "POST",
            "/v1/namespaces/shop/backendpools/Web!/outcomes",
            TOKEN,
            "application/json",
            "[" + fail("") + "]",
            404,
            "with Kubernetes names"),
        new Bad("GET", "GET", WEB_PATH, TOKEN, null, null, 405, "use POST"),
        new Bad(
            "text/plain",
            "POST",
            WEB_PATH,
            TOKEN,
            "text/plain",
            "[" + fail("") + "]",
            415,
            "application/x-ndjson"),
        bad("empty body", "", 400, "the body is empty"),
        bad("malformed JSON", "[" + fail("").substring(0, 30), 400, "malformed JSON at line 1"),
        bad("an object, not an array", fail(""), 400, "expected a JSON array of outcomes"),
        bad("content after the array", "[" + fail("") + "] []", 400, "content after the array"),
        new Bad(
            "malformed NDJSON line",
            "POST",
            WEB_PATH,
            TOKEN,
            "application/x-ndjson",
            fail("") + "\n{\"namespace\":\"shop\",}\n",
            400,
            "malformed JSON at line 2"),
        bad(
            "too many items",
            "[" + many + "]",
            413,
            "the batch has more than 100 outcomes; split it"),
        bad(
            "body over the byte limit",
            "[" + fail(",\"pad\":\"" + "x".repeat(70_000) + "\"") + "]",
            413,
            "the body is larger than 65536 bytes"),
        bad("an item that is not an object", "[42]", 422, "item is a number, not an object"),
        bad("ok is a string", "[" + fail(",\"ok\":\"no\"") + "]", 422, "ok must be true or false"),
        bad(
            "status out of range",
            "[" + fail("").replace("503", "700") + "]",
            422,
            "status must be an HTTP status 100..599"),
        bad(
            "status as a string",
            "[" + fail("").replace("503", "\"503\"") + "]",
            422,
            "status must be an HTTP status"),
        bad("misspelt field", "[" + fail(",\"sttaus\":503") + "]", 422, "unknown field \"sttaus\""),
        bad(
            "duplicate field",
            "[" + fail(",\"status\":200") + "]",
            422,
            "field \"status\" appears twice"),
        bad(
            "no verdict",
            "[{\"namespace\":\"shop\",\"pool\":\"web\",\"backend\":\"10.0.0.1:8080\"}]",
            422,
            "ok or status is required"),
        bad(
            "no backend",
            "[{\"namespace\":\"shop\",\"pool\":\"web\",\"ok\":false}]",
            422,
            "backend is required"),
        bad(
            "backend without a port",
            "[" + fail("").replace("10.0.0.1:8080", "10.0.0.1") + "]",
            422,
            "backend must be \"ip:port\""),
        bad(
            "backend port out of range",
            "[" + fail("").replace(":8080", ":70000") + "]",
            422,
            "with a port 1..65535"),
        bad(
            "backend is a host name",
            "[" + fail("").replace("10.0.0.1", "web-0.shop") + "]",
            422,
            "backend must be \"ip:port\""),
        bad(
            "unknown origin",
            "[" + fail(",\"origin\":\"remote\"") + "]",
            422,
            "origin must be \"upstream\" or \"local\""),
        bad(
            "negative latency",
            "[" + fail(",\"latencyMs\":-5") + "]",
            422,
            "latencyMs must be a number of milliseconds"),
        bad(
            "stale outcome",
            "[" + fail(",\"at\":\"2020-01-01T00:00:00Z\"") + "]",
            422,
            "ms ago; at most 300000 ms"),
        bad(
            "namespace not a Kubernetes name",
            "[" + fail("").replace("\"shop\"", "\"Shop!\"") + "]",
            422,
            "namespace \"Shop!\" is not a Kubernetes namespace"),
        new Bad(
            "unknown pool (this replica leads)",
            "POST",
            OutcomeIntake.path("shop", "gone"),
            TOKEN,
            "application/json",
            "[" + fail("").replace("\"web\"", "\"gone\"") + "]",
            403,
            "may not create backendpools/outcomes for pool shop/gone, or no such pool runs here"),
        bad(
            "backend not in the pool",
            "[" + fail("").replace("10.0.0.1", "10.9.9.9") + "]",
            422,
            "pool shop/web has no backend at 10.9.9.9"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInputs")
  void refusesBadInputWithAClearErrorAndChangesNothing(Bad bad) throws Exception {
    List<BackendView> before = IntakeHarness.state(web);

    HttpResponse<String> response =
        send(bad.method(), bad.path(), bad.token(), bad.contentType(), bad.body());

    assertThat(response.statusCode()).as(response.body()).isEqualTo(bad.status());
    assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
    JsonObject json = new JsonObject(response.body());
    if (bad.status() == 422) {
      assertThat(json.getInteger("accepted")).isZero();
      assertThat(json.getInteger("rejected")).isEqualTo(1);
      JsonObject error = json.getJsonArray("errors").getJsonObject(0);
      assertThat(error.getInteger("index")).isZero();
      assertThat(error.getString("message")).contains(bad.message());
    } else {
      assertThat(json.getString("error")).isNotBlank();
      assertThat(json.getString("message")).contains(bad.message());
    }
    assertThat(IntakeHarness.state(web)).isEqualTo(before);
    assertThat(harness.reviewer.onEventLoop).hasValue(0);
  }

  private HttpResponse<String> send(
      String method, String path, String token, String contentType, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + harness.port + path))
            .timeout(Duration.ofSeconds(10))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      b.header("Authorization", token.startsWith("Basic ") ? token : "Bearer " + token);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String contentType, String body) throws Exception {
    return send("POST", WEB_PATH, TOKEN, contentType, body);
  }

  private BackendView backend(int i) {
    return IntakeHarness.state(web).get(i);
  }

  @Test
  void takesAJsonArrayAndCountsFailuresByStatus() throws Exception {
    HttpResponse<String> r =
        post(
            "application/json",
            "["
                + fail("")
                + ","
                + fail(",\"latencyMs\":12.5,\"at\":" + clock.get())
                + ",{\"namespace\":\"shop\",\"pool\":\"web\",\"backend\":\"10.0.0.2:8080\","
                + "\"status\":404,\"origin\":\"upstream\"}]");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(new JsonObject(r.body()).getMap())
        .containsEntry("accepted", 3)
        .containsEntry("rejected", 0);
    assertThat(backend(0).upstreamErrors()).isEqualTo(2);
    assertThat(backend(1).upstreamErrors()).isZero();
    assertThat(meters.counter("vigil_outcomes_received_total").count()).isEqualTo(3);
    assertThat(
            meters
                .counter("vigil_outcomes_accepted_total", "namespace", "shop", "pool", "web")
                .count())
        .isEqualTo(3);
  }

  @Test
  void takesNdjsonAndTreatsNoResponseAsALocalOriginFailure() throws Exception {
    HttpResponse<String> r =
        post(
            "application/x-ndjson; charset=utf-8",
            fail("").replace("503", "0")
                + "\n\n"
                + "{\"namespace\":\"shop\",\"pool\":\"web\",\"backend\":\"10.0.0.3:8080\","
                + "\"ok\":false,\"status\":200}\n");

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(backend(0).localOriginErrors()).isEqualTo(1);
    assertThat(backend(0).upstreamErrors()).isZero();
    assertThat(backend(2).upstreamErrors()).as("ok decides over status").isEqualTo(1);
  }

  @Test
  void appliesTheGoodItemsOfAMixedBatchAndSaysWhyTheOthersWereRejected() throws Exception {
    HttpResponse<String> r =
        post(
            "application/json",
            "["
                + fail("")
                + ","
                + fail("").replace("10.0.0.1", "10.9.9.9")
                + ","
                + fail(",\"ok\":1")
                + ","
                + fail("").replace("\"web\"", "\"gone\"")
                + "]");

    assertThat(r.statusCode()).isEqualTo(200);
    JsonObject json = new JsonObject(r.body());
    assertThat(json.getInteger("accepted")).isEqualTo(1);
    assertThat(json.getInteger("rejected")).isEqualTo(3);
    assertThat(json.getJsonArray("errors").stream().map(e -> ((JsonObject) e).getMap()))
        .extracting(m -> m.get("index") + " " + m.get("reason"))
        .containsExactly("1 unknown_backend", "2 invalid_field", "3 invalid_field");
    assertThat(backend(0).upstreamErrors()).isEqualTo(1);
    assertThat(meters.counter("vigil_outcomes_rejected_total", "reason", "unknown_backend").count())
        .isEqualTo(1);
  }

  @Test
  void ejectsAfterConsecutiveErrorsAndCountsItPerPoolWithoutABackendLabel() throws Exception {
    web =
        harness.pool(
            new PoolKey("shop", "web"),
            3,
            HealthSettings.defaults().toBuilder().maxEjectionPercent(50).build());
    String five = IntStream.range(0, 5).mapToObj(i -> fail("")).collect(Collectors.joining(","));

    assertThat(post("application/json", "[" + five + "]").statusCode()).isEqualTo(200);

    assertThat(backend(0).ejected()).isTrue();
    assertThat(
            meters
                .counter(
                    "vigil_outcome_ejections_total",
                    "namespace",
                    "shop",
                    "pool",
                    "web",
                    "decision",
                    "ejected")
                .count())
        .isEqualTo(1);
    assertThat(meters.getMeters())
        .as("no series per Pod: they would grow with every rollout")
        .allSatisfy(m -> assertThat(m.getId().getTag("backend")).isNull());
  }

  @Test
  void aFullPoolQueueRejectsTheRestAndCountsIt() throws Exception {
    harness.close();
    harness = new IntakeHarness(vertx, meters, LIMITS.withQueuePerPool(2), clock::get);
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:envoy", "shop");
    web = harness.pool(WEB, 3, HealthSettings.defaults());
    String ok = fail("").replace("\"status\":503", "\"ok\":true");

    HttpResponse<String> r = post("application/json", "[" + ok + "," + ok + "," + ok + "]");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(new JsonObject(r.body()).getInteger("accepted")).isEqualTo(2);
    assertThat(r.body()).contains("\"index\":2", "queue_full", "retry");
    assertThat(
            meters
                .counter("vigil_outcome_queue_overflow_total", "namespace", "shop", "pool", "web")
                .count())
        .isEqualTo(1);
  }

  @Test
  void cachesReviewsSoARepeatedReporterCostsNoApiCalls() throws Exception {
    String ok = "[" + fail("").replace("\"status\":503", "\"ok\":true") + "]";
    for (int i = 0; i < 5; i++) {
      assertThat(post("application/json", ok).statusCode()).isEqualTo(200);
    }
    assertThat(harness.reviewer.tokenReviews).hasValue(1);
    assertThat(harness.reviewer.accessReviews).hasValue(1);

    clock.addAndGet(LIMITS.allowTtlMs() + 1);
    assertThat(post("application/json", ok).statusCode()).isEqualTo(200);
    assertThat(harness.reviewer.tokenReviews).hasValue(2);
    assertThat(harness.reviewer.onEventLoop).hasValue(0);
  }

  @Test
  void cachesADenialOnlyBriefly() throws Exception {
    String body = "[" + fail("") + "]";
    assertThat(send("POST", WEB_PATH, "late", "application/json", body).statusCode())
        .isEqualTo(401);
    harness.reviewer.user("late", "system:serviceaccount:shop:late", "shop");
    assertThat(send("POST", WEB_PATH, "late", "application/json", body).statusCode())
        .as("denial cached")
        .isEqualTo(401);

    clock.addAndGet(LIMITS.denyTtlMs() + 1);
    assertThat(send("POST", WEB_PATH, "late", "application/json", body).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aBatchForARuntimeClosedByAHandoffIsRefusedWholeSoTheReporterSendsItToTheNextOwner()
      throws Exception {
    List<BackendView> before = IntakeHarness.state(web);
    web.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    HttpResponse<String> r = post("application/json", "[" + fail("") + "]");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("moving").contains("nothing was applied");
    assertThat(r.headers().firstValue("retry-after")).isPresent();
    assertThat(IntakeHarness.state(web)).isEqualTo(before);
  }

  @Test
  void aStoppingIntakeAnswersOnOpenConnectionsThatTheReporterMustGoElsewhere() throws Exception {
    // a kept-alive connection (the client's pool) is open when the stop begins
    assertThat(post("application/json", "[" + fail("") + "]").statusCode()).isEqualTo(200);
    List<BackendView> before = IntakeHarness.state(web);
    var closing = harness.intake.close();

    HttpResponse<String> r = post("application/json", "[" + fail("") + "]");

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("stopping").contains("nothing was applied");
    assertThat(r.headers().firstValue("retry-after")).hasValue("2");
    assertThat(r.headers().firstValue("connection")).hasValue("close");
    assertThat(IntakeHarness.state(web)).as("nothing applied").isEqualTo(before);
    IntakeHarness.await(closing);
  }

  @Test
  void aFailingReviewIsServiceUnavailableAndNotCached() throws Exception {
    List<BackendView> before = IntakeHarness.state(web);
    harness.reviewer.failing = true;
    HttpResponse<String> r = post("application/json", "[" + fail("") + "]");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("review_unavailable").doesNotContain("etcdserver");
    assertThat(r.headers().firstValue("retry-after")).isPresent();
    assertThat(IntakeHarness.state(web)).isEqualTo(before);

    harness.reviewer.failing = false;
    assertThat(post("application/json", "[" + fail("") + "]").statusCode()).isEqualTo(200);
  }

  @Test
  void refusesAnOversizedChunkedBodyWhileItIsStillBeingSent() throws Exception {
    List<BackendView> before = IntakeHarness.state(web);
    try (Socket s = TestTls.socket(harness.port)) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST "
                  + WEB_PATH
                  + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                  + TOKEN
                  + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = "[".concat(" ".repeat(70_000)).getBytes(StandardCharsets.US_ASCII);
      out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(chunk);
      out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      // The body never ends: the reply must come anyway.
      String reply = read(s.getInputStream());
      assertThat(reply).startsWith("HTTP/1.1 413").contains("body_too_large");
    }
    assertThat(IntakeHarness.state(web)).isEqualTo(before);
  }

  @Test
  void answersASlowClientWithRequestTimeout() throws Exception {
    List<BackendView> before = IntakeHarness.state(web);
    long start = System.nanoTime();
    try (Socket s = TestTls.socket(harness.port)) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST "
                  + WEB_PATH
                  + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                  + TOKEN
                  + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n["
                  + fail(""))
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String reply = read(s.getInputStream());
      assertThat(reply).startsWith("HTTP/1.1 408").contains("did not arrive within 700 ms");
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    assertThat(IntakeHarness.state(web)).isEqualTo(before);
  }

  /** Reads a whole reply from a connection the server closes after it. */
  private static String read(InputStream in) throws Exception {
    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
  }

  /**
   * A batch whose application throws (here: the transition sink) still answers and releases the
   * pool's queue slots: its promise fails instead of never completing, so the pool does not end up
   * answering 429 forever.
   */
  @Test
  void aBatchThatThrowsReleasesItsQueueSlots() throws Exception {
    IntakeHarness broken =
        new IntakeHarness(
            vertx,
            meters,
            LIMITS.withQueuePerPool(2),
            clock::get,
            new dev.vigil.runtime.TransitionSink() {
              @Override
              public void stateChanged(PoolKey p, String b, String f, String t, String r) {}

              @Override
              public void ejected(PoolKey p, String b, long u, String w) {
                throw new IllegalStateException("sink broke");
              }

              @Override
              public void ejectionRefused(PoolKey p, String b, String w) {}

              @Override
              public void wouldEject(PoolKey p, String b, String w) {}

              @Override
              public void panicChanged(
                  PoolKey p, boolean panic, dev.vigil.health.AvailabilitySnapshot.Counts c) {}
            });
    try {
      broken.reviewer.user(TOKEN, "system:serviceaccount:shop:envoy", "shop");
      broken.pool(
          WEB, 4, HealthSettings.builder().consecutiveErrors(1).maxEjectionPercent(100).build());
      String body =
          "[{\"backend\":\"10.0.0.1:8080\",\"status\":503},"
              + "{\"backend\":\"10.0.0.2:8080\",\"status\":503}]";
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + broken.port + WEB_PATH))
                    .header("Authorization", "Bearer " + TOKEN)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("request %d: %s", i, r.body()).isNotIn(429, 503);
      }
    } finally {
      broken.close();
    }
  }
}
