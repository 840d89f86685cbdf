package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The intake's port offers HTTP/2 (ALPN) since the OTLP receiver shares it: a JSON report refused
 * before its body was read ends its own stream, not the connection that the caller's other requests
 * share (HTTP/1.1 still closes, as before).
 */
class IntakeHttp2Test {
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
}
