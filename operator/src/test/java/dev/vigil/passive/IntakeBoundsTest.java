package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the intake decides before it reads a body, and the bound on every resource a caller can make
 * it spend (docs/design.md §4, wave 2): TLS only with rotation, a standby's 503, no
 * SubjectAccessReview for a pool that does not run here, the rate per identity, the review queue,
 * bytes in flight, connections, and the review cache's least-recently-used eviction.
 */
class IntakeBoundsTest {
  private static final String TOKEN = "envoy-token";
  private static final PoolKey WEB = new PoolKey("shop", "web");
  private static final String WEB_PATH = OutcomeIntake.path("shop", "web");
  private static final String ONE = "[{\"backend\":\"10.0.0.1:8080\",\"ok\":true}]";
  private static final IntakeLimits LIMITS =
      IntakeLimits.defaults().withMaxBodyBytes(64 * 1024).withRequestTimeoutMs(3_000);

  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final HttpClient http = TestTls.client();
  private final Vertx vertx = Vertx.vertx();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private IntakeHarness harness;
  private PoolRuntime web;

  private void start(IntakeLimits limits) {
    start(limits, TestTls.certFile(), TestTls.keyFile());
  }

  private void start(IntakeLimits limits, Path cert, Path key) {
    harness = new IntakeHarness(vertx, meters, limits, clock::get, cert, key);
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:envoy", "shop");
    harness.reviewer.user("other-token", "system:serviceaccount:other:envoy", "other");
    web = harness.pool(WEB, 3, HealthSettings.defaults());
  }

  @AfterEach
  void tearDown() {
    if (harness != null) {
      harness.reviewer.hold = null;
      harness.close();
    }
    IntakeHarness.await(vertx.close());
  }

  private HttpResponse<String> post(String path, String token, String body) throws Exception {
    return harness.post(http, path, token, body);
  }

  /** Sends headers that promise a body of {@code length} bytes and only {@code sent} of it. */
  private static void headersOnly(Socket s, String path, String token, int length, String sent)
      throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(
        ("POST "
                + path
                + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + token
                + "\r\nContent-Type: application/json\r\nContent-Length: "
                + length
                + "\r\n\r\n"
                + sent)
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** The status line and headers of the reply (the body may never end). */
  private static String head(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      b.append((char) c);
      if (b.length() >= 4 && b.substring(b.length() - 4).equals("\r\n\r\n")) {
        break;
      }
    }
    return b.toString();
  }

  @Test
  void aStandbyAnswers503WithRetryAfterBeforeReadingTheBody() throws Exception {
    start(LIMITS);
    harness.leading = false;
    try (Socket s = TestTls.socket(harness.port)) {
      headersOnly(s, OutcomeIntake.path("shop", "elsewhere"), TOKEN, 10_000, "[");
      String reply = head(s.getInputStream());
      assertThat(reply).startsWith("HTTP/1.1 503").containsIgnoringCase("retry-after:");
    }
    assertThat(harness.intake.bytesInFlight()).as("no body reserved").isZero();
  }

  @Test
  void aStandbyAnswersOnlyAnAuthorizedCallerThatThePoolRunsElsewhere() throws Exception {
    start(LIMITS);
    harness.leading = false;
    HttpResponse<String> r = post(OutcomeIntake.path("other", "web"), TOKEN, ONE);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(403);
    assertThat(r.body()).doesNotContain("does not run");
  }

  @Test
  void refusesAnUnauthorizedCallerBeforeItsBodyArrives() throws Exception {
    start(LIMITS);
    List<BackendView> before = IntakeHarness.state(web);
    long start = System.nanoTime();
    try (Socket s = TestTls.socket(harness.port)) {
      headersOnly(s, WEB_PATH, "other-token", 60_000, "[");
      assertThat(head(s.getInputStream())).startsWith("HTTP/1.1 403");
    }
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("not the 3 s request deadline")
        .isLessThan(Duration.ofMillis(2_500));
    assertThat(IntakeHarness.state(web)).isEqualTo(before);
    assertThat(harness.intake.bytesInFlight()).isZero();
  }

  @Test
  void limitsEachIdentitysRateWith429AndRetryAfter() throws Exception {
    start(LIMITS.withRate(1, 3));
    for (int i = 0; i < 3; i++) {
      assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).isEqualTo(200);
    }
    HttpResponse<String> limited = post(WEB_PATH, TOKEN, ONE);
    assertThat(limited.statusCode()).isEqualTo(429);
    assertThat(limited.headers().firstValue("retry-after")).hasValue("1");
    assertThat(post(OutcomeIntake.path("other", "web"), "other-token", ONE).statusCode())
        .as("another identity has its own bucket")
        .isNotEqualTo(429);

    clock.addAndGet(1_000);
    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).isEqualTo(200);
  }

  @Test
  void aFullReviewQueueAnswers503WithRetryAfter() throws Exception {
    start(LIMITS.withMaxPendingReviews(1));
    harness.reviewer.user("second", "system:serviceaccount:shop:second", "shop");
    CountDownLatch release = new CountDownLatch(1);
    harness.reviewer.hold = release;
    CompletableFuture<HttpResponse<String>> first =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return post(WEB_PATH, TOKEN, ONE);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> harness.reviewer.entered.get() == 1);

    HttpResponse<String> second = post(WEB_PATH, "second", ONE);
    assertThat(second.statusCode()).as(second.body()).isEqualTo(503);
    assertThat(second.body()).contains("busy");
    assertThat(second.headers().firstValue("retry-after")).isPresent();

    release.countDown();
    harness.reviewer.hold = null;
    assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void boundsTheBodyBytesHeldAcrossRequests() throws Exception {
    start(LIMITS.withMaxBytesInFlight(80_000));
    try (Socket slow = TestTls.socket(harness.port)) {
      headersOnly(slow, WEB_PATH, TOKEN, 60_000, "[");
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> harness.intake.bytesInFlight() == 60_000);

      String big = "[" + " ".repeat(30_000) + "{\"backend\":\"10.0.0.1:8080\",\"ok\":true}]";
      HttpResponse<String> refused = post(WEB_PATH, TOKEN, big);
      assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
      assertThat(refused.headers().firstValue("retry-after")).isPresent();
      assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).as("a small one fits").isEqualTo(200);
    }
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> harness.intake.bytesInFlight() == 0);
  }

  @Test
  void closesConnectionsPastTheLimit() throws Exception {
    start(LIMITS.withMaxConnections(2));
    try (SSLSocket a = TestTls.socket(harness.port);
        SSLSocket b = TestTls.socket(harness.port)) {
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> harness.intake.connections() == 2);
      assertThatThrownBy(
              () -> {
                try (SSLSocket c = TestTls.socket(harness.port)) {
                  headersOnly(c, WEB_PATH, TOKEN, 2, "[]");
                  if (c.getInputStream().read() < 0) {
                    throw new IOException("closed");
                  }
                }
              })
          .isInstanceOf(IOException.class);
      assertThat(meters.counter("vigil_outcome_connections_refused_total").count()).isEqualTo(1);
    }
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> harness.intake.connections() == 0);
    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).isEqualTo(200);
  }

  @Test
  void aFloodOfMadeUpTokensCostsABoundedNumberOfTokenReviews() throws Exception {
    start(LIMITS.withFailedAuthentications(1, 5).withRate(1_000, 1_000));
    for (int i = 0; i < 40; i++) {
      HttpResponse<String> r = post(WEB_PATH, "made-up-" + i, ONE);
      assertThat(r.statusCode()).as("token %d", i).isEqualTo(i < 5 ? 401 : 429);
      if (i >= 5) {
        assertThat(r.body()).contains("too_many_failed_authentications");
        assertThat(r.headers().firstValue("retry-after")).hasValue("1");
      }
    }
    assertThat(harness.reviewer.tokenReviews)
        .as("TokenReviews for 40 made-up tokens from one address: the burst of 5")
        .hasValue(5);
    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode())
        .as("a token that is not cached waits for the address's next review too")
        .isEqualTo(429);

    clock.addAndGet(1_000); // one more review per second
    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).isEqualTo(200);
    assertThat(post(WEB_PATH, "made-up-x", ONE).statusCode())
        .as("the valid token's review was given back")
        .isEqualTo(401);
    assertThat(post(WEB_PATH, "made-up-y", ONE).statusCode()).isEqualTo(429);
    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).as("cached: no review").isEqualTo(200);
    assertThat(harness.reviewer.tokenReviews).hasValue(7);
  }

  @Test
  void theReviewCacheDropsTheLeastRecentlyUsedTokenNotAll() throws Exception {
    start(LIMITS.withMaxCachedReviews(2).withRate(1_000, 1_000));
    harness.reviewer.user("b", "system:serviceaccount:shop:b", "shop");
    harness.reviewer.user("c", "system:serviceaccount:shop:c", "shop");
    post(WEB_PATH, TOKEN, ONE);
    post(WEB_PATH, "b", ONE);
    post(WEB_PATH, TOKEN, ONE); // TOKEN is now the most recently used
    post(WEB_PATH, "c", ONE); // evicts b, not TOKEN
    assertThat(harness.reviewer.tokenReviews).hasValue(3);

    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).isEqualTo(200);
    assertThat(harness.reviewer.tokenReviews).as("TOKEN still cached").hasValue(3);
    assertThat(post(WEB_PATH, "b", ONE).statusCode()).isEqualTo(200);
    assertThat(harness.reviewer.tokenReviews).as("b was evicted").hasValue(4);
  }

  @Test
  void plainHttpToTheTlsPortGetsNoHttpAnswer() throws Exception {
    start(LIMITS);
    try (Socket s = new Socket("127.0.0.1", harness.port)) {
      s.setSoTimeout(5_000);
      headersOnly(s, WEB_PATH, TOKEN, 2, "[]");
      byte[] reply;
      try {
        reply = s.getInputStream().readAllBytes();
      } catch (IOException e) {
        reply = new byte[0]; // reset: no answer at all
      }
      assertThat(new String(reply, StandardCharsets.ISO_8859_1)).doesNotContain("HTTP/1.");
    }
  }

  @Test
  void servesARotatedCertificateToNewConnectionsWithoutARestart(@TempDir Path dir)
      throws Exception {
    CertificateAuthority ca = TestTls.ca();
    CertificateAuthority.Issued first =
        ca.issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1));
    first.writeTo(dir);
    start(LIMITS, dir.resolve("tls.crt"), dir.resolve("tls.key"));
    assertThat(servedSerial()).isEqualTo(first.serial());
    assertThat(IntakeHarness.await(harness.certificate.check())).as("nothing changed").isFalse();

    CertificateAuthority.Issued second =
        ca.issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1));
    Files.writeString(dir.resolve("tls.key"), second.keyPem());
    Files.writeString(dir.resolve("tls.crt"), second.certPem());
    assertThat(IntakeHarness.await(harness.certificate.check())).isTrue();

    assertThat(servedSerial()).isEqualTo(second.serial());
    assertThat(post(WEB_PATH, TOKEN, ONE).statusCode()).isEqualTo(200);

    Files.writeString(dir.resolve("tls.crt"), "-----BEGIN CERTIFICATE-----\nbroken\n");
    assertThat(IntakeHarness.await(harness.certificate.check()))
        .as("a half-written rotation keeps the old pair")
        .isFalse();
    assertThat(servedSerial()).isEqualTo(second.serial());
  }

  private BigInteger servedSerial() throws IOException {
    try (SSLSocket s = TestTls.socket(harness.port)) {
      return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }
}
