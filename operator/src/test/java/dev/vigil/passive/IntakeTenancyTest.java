package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.LoopbackSockets;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What one tenant's connections cannot take from another's on the outcome intake (issue 31, item
 * 6), over real loopback TLS sockets: a request head trickled a byte at a time does not hold its
 * connection past the head deadline, one address cannot take every connection, and whether a pool
 * exists is not told to a caller that may not report for it.
 */
class IntakeTenancyTest {
  private static final String TOKEN = "envoy-token";
  private static final String ONE = "[{\"backend\":\"10.0.0.1:8080\",\"ok\":true}]";
  private static final IntakeLimits LIMITS =
      IntakeLimits.defaults().withMaxBodyBytes(64 * 1024).withRequestTimeoutMs(3_000);

  private final AtomicLong clock = new AtomicLong(1_000_000);
  private final HttpClient http = TestTls.client();
  private final Vertx vertx = Vertx.vertx();
  private IntakeHarness harness;

  private void start(IntakeLimits limits) {
    harness = new IntakeHarness(vertx, new SimpleMeterRegistry(), limits, clock::get);
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:envoy", "shop");
    harness.reviewer.user("other-token", "system:serviceaccount:other:envoy", "other");
    harness.pool(new PoolKey("shop", "web"), 3, HealthSettings.defaults());
    harness.pool(new PoolKey("other", "web"), 3, HealthSettings.defaults());
  }

  @AfterEach
  void tearDown() {
    if (harness != null) {
      harness.close();
    }
    IntakeHarness.await(vertx.close());
  }

  @Test
  void aHeadTrickledOneBytePer100msIsCutAtTheHeadDeadline() throws Exception {
    start(LIMITS.withHeaderTimeoutMs(1_000));
    try (SSLSocket s = socketFrom("127.0.0.2")) {
      // Without a head deadline the idle timeout (60 s, reset by every byte) never fires.
      Duration closed =
          LoopbackSockets.trickleUntilClosed(
              s,
              "POST " + OutcomeIntake.path("shop", "web") + " HTTP/1.1\r\nX-Slow: ",
              Duration.ofSeconds(8));
      assertThat(closed).as("closed within 8 s although a byte came every 100 ms").isNotNull();
      assertThat(closed).isGreaterThanOrEqualTo(Duration.ofMillis(900));
    }
  }

  @Test
  void oneAddressCannotTakeEveryConnection() throws Exception {
    start(LIMITS.withMaxConnectionsPerSource(3));
    List<SSLSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        held.add(socketFrom("127.0.0.2"));
      }
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> harness.intake.connections() == 3);
      try (SSLSocket fourth = socketFrom("127.0.0.2")) {
        fourth.setSoTimeout(5_000);
        assertThat(answerOrClose(fourth)).as("the 4th from 127.0.0.2 is closed").isEmpty();
      }
      try (SSLSocket other = socketFrom("127.0.0.3")) {
        other.setSoTimeout(5_000);
        assertThat(answerOrClose(other))
            .as("127.0.0.3 has its own share")
            .startsWith("HTTP/1.1 200");
      }
    } finally {
      for (SSLSocket s : held) {
        s.close();
      }
    }
  }

  @Test
  void aPoolThatDoesNotExistAndOneThatMayNotBeReportedForGetTheSameAnswer() throws Exception {
    start(LIMITS);
    HttpResponse<String> exists = post(OutcomeIntake.path("other", "web"), TOKEN);
    HttpResponse<String> missing = post(OutcomeIntake.path("other", "no-such-pool"), TOKEN);
    HttpResponse<String> missingHere = post(OutcomeIntake.path("shop", "no-such-pool"), TOKEN);
    assertThat(exists.statusCode()).isEqualTo(403);
    assertThat(missing.statusCode()).isEqualTo(403);
    assertThat(missingHere.statusCode()).as(missingHere.body()).isEqualTo(403);
    assertThat(missing.body().replace("no-such-pool", "web")).isEqualTo(exists.body());
    assertThat(missingHere.body()).isEqualTo(missing.body().replace("other/", "shop/"));
  }

  /** An allowed reporter's small batch gets bytes that senders of large bodies hold open. */
  @Test
  void aSmallBatchFromAnotherAddressTakesBytesFromTheSourceHoldingTheMost() throws Exception {
    start(LIMITS.withMaxBytesInFlight(120_000));
    List<SSLSocket> slow = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        SSLSocket s = socketFrom("127.0.0.2");
        slow.add(s);
        s.getOutputStream()
            .write(
                ("POST "
                        + OutcomeIntake.path("shop", "web")
                        + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                        + TOKEN
                        + "\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n[")
                    .getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
      }
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> harness.intake.bytesInFlight() == 120_000);
      HttpResponse<String> r = post(OutcomeIntake.path("shop", "web"), TOKEN);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      slow.get(0).setSoTimeout(5_000);
      slow.get(1).setSoTimeout(5_000);
      String first = answerOrClose(slow.get(0));
      String second = answerOrClose(slow.get(1));
      assertThat(List.of(first, second))
          .as("one slow sender yielded its bytes: 503, retry")
          .anySatisfy(a -> assertThat(a).startsWith("HTTP/1.1 503"));
    } finally {
      for (SSLSocket s : slow) {
        s.close();
      }
    }
  }

  private HttpResponse<String> post(String path, String token) throws Exception {
    return harness.post(http, path, token, ONE);
  }

  private SSLSocket socketFrom(String local) throws IOException {
    return LoopbackSockets.tlsFrom(local, harness.port);
  }

  /**
   * Sends a one-outcome batch if the connection is still open and returns the reply's status line
   * and headers, or "" when the connection was closed without an answer.
   */
  private static String answerOrClose(SSLSocket s) {
    return LoopbackSockets.replyHead(
        s,
        "POST "
            + OutcomeIntake.path("shop", "web")
            + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + TOKEN
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + ONE.length()
            + "\r\n\r\n"
            + ONE);
  }
}
