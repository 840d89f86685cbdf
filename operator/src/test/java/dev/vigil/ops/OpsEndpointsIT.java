package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.OperatorConfig;
import dev.vigil.Vigil;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The real operator against the mock API server, scraped over loopback: every metric family of
 * docs/metrics.md appears with its labels, and /healthz and /readyz answer.
 */
class OpsEndpointsIT {
  private static final String NS = "shop";

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void servesEveryMetricFamilyAndTheProbesOverLoopback() throws Exception {
    int port = cluster.port();
    KubernetesClient client = cluster.client();
    client.resource(Fixtures.policy(NS, "fast", "1s", "900ms")).create();
    List<DemoBackend> backends = cluster.pods(NS, "web", 3, 20);
    client.resource(Fixtures.pool(NS, "web", "fast", "web", port)).create();

    Vigil.Running operator = cluster.operator(config()).running();
    int ops = operator.ops().port();
    assertThat(ops).isPositive();

    assertThat(get(ops, "/healthz").statusCode()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(60)).until(() -> get(ops, "/readyz").statusCode() == 200);
    assertThat(get(ops, "/readyz").body()).contains("informers synced");

    String pool = "namespace=\"shop\",pool=\"web\"";
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> metrics(ops).contains("vigil_backends{" + pool + ",state=\"up\"} 3.0"));

    // Two of three fail: below the 50% panic threshold, so the pool panics.
    backends.get(0).set(Mode.FAILING).toCompletionStage().toCompletableFuture().join();
    backends.get(1).set(Mode.REFUSE).toCompletionStage().toCompletableFuture().join();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              String m = metrics(ops);
              return m.contains("vigil_pool_panic{" + pool + "} 1.0")
                  && m.contains("reason=\"status\"")
                  && m.contains("reason=\"connection_refused\"");
            });

    String text = metrics(ops);
    assertThat(text)
        // Exact counts depend on timing (a loaded machine times out healthy probes too).
        .contains("vigil_backends{" + pool + ",state=\"down\"} ")
        .contains("vigil_backends{" + pool + ",state=\"ejected\"} 0.0")
        .contains("vigil_pool_available{" + pool + "} ")
        .contains("vigil_pool_probe_lanes{" + pool + "} 1.0")
        .contains("vigil_probe_starts_deferred_total{" + pool + "} ")
        .contains("vigil_probe_starts_held_total{" + pool + "} ")
        .contains(
            "vigil_probes_total{protocol=\"http\",reason=\"ok\",result=\"pass\"}",
            "vigil_probes_total{protocol=\"http\",reason=\"status\",result=\"fail\"}",
            "vigil_probes_total{protocol=\"http\",reason=\"connection_refused\",result=\"fail\"}",
            "vigil_probe_duration_seconds_bucket{protocol=\"http\",result=\"pass\",le=\"0.1\"}",
            "vigil_probe_duration_seconds_count{protocol=\"http\",result=\"fail\"}")
        // The first probes of a loaded machine may time out, so only the last step is certain.
        .contains("vigil_transitions_total{from=\"up\"," + pool + ",to=\"down\"}")
        .contains("vigil_panic_transitions_total{" + pool + ",to=\"entered\"}")
        .contains(
            "vigil_api_writes_total{resource=\"endpointslices\"}",
            "vigil_api_writes_total{resource=\"services\"}",
            "vigil_api_writes_total{resource=\"status\"}")
        .contains(
            "reconciliations_execution_duration_seconds_count{controller_name=\"backendpool\"",
            "reconciliations_success_total{controller_name=\"backendpool\"");
    assertThat(text).doesNotContain("vigil_backend_ejected{");
  }

  @Test
  void refusesAPortInUseWithTheFlagInTheMessage() throws Exception {
    try (ServerSocket taken = new ServerSocket(0)) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> cluster.operator(config("--metrics-port=" + taken.getLocalPort())))
          .hasMessageContaining("--metrics-port " + taken.getLocalPort());
    }
  }

  private static OperatorConfig config(String... flags) {
    return MockCluster.config(NS, flags);
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(5))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String metrics(int port) throws Exception {
    HttpResponse<String> r = get(port, "/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    // Prometheus' text exposition format, version 0.0.4: scrapers pick the parser by this header.
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain").contains("version=0.0.4"));
    return r.body();
  }
}
