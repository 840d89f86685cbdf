package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The intake's port offers HTTP/2 (ALPN) since the OTLP receiver shares it: a JSON report refused
 * before its body was read ends its own stream, not the connection that the caller's other requests
 * share (HTTP/1.1 still closes, as before). What the client still sends of it is read and dropped,
 * so it does not hold the connection's flow-control window, and a stream still sending after the
 * drain's second is reset with {@code NO_ERROR} (RFC 9113 section 8.1), frame by frame with {@link
 * RawHttp2Client}.
 */
class IntakeHttp2Test {
  private static final String TOKEN = "envoy-token";

  @Test
  void aRefusedRequestLeavesTheSharedConnectionToTheNextOnes() throws Exception {
    Vertx vertx = Vertx.vertx();
    IntakeHarness harness =
        new IntakeHarness(
            vertx, new SimpleMeterRegistry(), IntakeLimits.defaults(), System::currentTimeMillis);
    try {
      harness.reviewer.user("envoy-token", "system:serviceaccount:shop:envoy", "shop");
      harness.pool(new PoolKey("shop", "web"), 3, HealthSettings.defaults());
      HttpClient h2 =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_2)
              .sslContext(TestTls.trusting())
              .build();
      List<String> answers = new ArrayList<>();
      for (String token : List.of("made-up", "envoy-token", "made-up", "envoy-token")) {
        HttpResponse<String> r =
            h2.send(
                HttpRequest.newBuilder(
                        URI.create(
                            "https://127.0.0.1:"
                                + harness.port
                                + OutcomeIntake.path("shop", "web")))
                    .header("Authorization", "Bearer " + token)
                    .header("Content-Type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "[{\"backend\":\"10.0.0.1:8080\",\"status\":200}]"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        answers.add(r.version() + " " + r.statusCode());
      }

      assertThat(answers).containsExactly("HTTP_2 401", "HTTP_2 200", "HTTP_2 401", "HTTP_2 200");
    } finally {
      harness.close();
      vertx.close();
    }
  }

  @Test
  void aRefusedRequestsUnreadBodyDoesNotHoldTheConnectionsWindow() throws Exception {
    Vertx vertx = Vertx.vertx();
    IntakeHarness harness = harness(vertx);
    try (RawHttp2Client client = new RawHttp2Client(harness.port)) {
      // 48 KiB of a body, refused (401) before it is read: three quarters of the connection's
      // 64 KiB window, which comes back only for bytes the server reads
      int refused = client.send(headers(harness, "made-up"), new byte[48 * 1024], false);
      await().atMost(Duration.ofSeconds(10)).until(() -> client.header(refused, ":status") != null);
      assertThat(client.header(refused, ":status")).isEqualTo("401");

      // the next request on the connection needs 48 KiB of window too: it gets it only if the
      // refused stream's bytes were read (and dropped)
      byte[] padded = new byte[48 * 1024];
      Arrays.fill(padded, (byte) ' ');
      padded[0] = '[';
      padded[padded.length - 1] = ']';
      int next = client.send(headers(harness, TOKEN), padded, true);
      await().atMost(Duration.ofSeconds(10)).until(() -> client.header(next, ":status") != null);
      assertThat(client.header(next, ":status")).isEqualTo("200");
    } finally {
      harness.close();
      vertx.close();
    }
  }

  @Test
  void aRefusedStreamStillSendingAfterTheDrainIsResetWithNoError() throws Exception {
    Vertx vertx = Vertx.vertx();
    IntakeHarness harness = harness(vertx);
    try (RawHttp2Client client = new RawHttp2Client(harness.port)) {
      int refused = client.send(headers(harness, "made-up"), new byte[1024], false);
      await().atMost(Duration.ofSeconds(10)).until(() -> client.ended(refused));
      assertThat(client.header(refused, ":status")).isEqualTo("401");
      // the client never ends its body: after the drain's second the server asks it to stop
      await().atMost(Duration.ofSeconds(10)).until(() -> !client.resets(refused).isEmpty());
      assertThat(client.resets(refused)).containsExactly(0L); // NO_ERROR

      byte[] batch =
          "[{\"backend\":\"10.0.0.1:8080\",\"status\":200}]".getBytes(StandardCharsets.UTF_8);
      int next = client.send(headers(harness, TOKEN), batch, true);
      await().atMost(Duration.ofSeconds(10)).until(() -> client.header(next, ":status") != null);
      assertThat(client.header(next, ":status")).isEqualTo("200");
      assertThat(client.resets(next)).isEmpty();
    } finally {
      harness.close();
      vertx.close();
    }
  }

  private static IntakeHarness harness(Vertx vertx) {
    IntakeHarness harness =
        new IntakeHarness(
            vertx, new SimpleMeterRegistry(), IntakeLimits.defaults(), System::currentTimeMillis);
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:envoy", "shop");
    harness.pool(new PoolKey("shop", "web"), 3, HealthSettings.defaults());
    return harness;
  }

  private static DefaultHttp2Headers headers(IntakeHarness harness, String token) {
    DefaultHttp2Headers h = new DefaultHttp2Headers();
    h.method("POST")
        .scheme("https")
        .path(OutcomeIntake.path("shop", "web"))
        .authority("localhost:" + harness.port);
    h.set("content-type", "application/json");
    h.set("authorization", "Bearer " + token);
    return h;
  }
}
