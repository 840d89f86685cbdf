package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The status codes of /healthz and /readyz, and the paths and methods the server refuses. */
class OpsServerTest {
  private final Vertx vertx = Vertx.vertx();
  private final AtomicLong nanos = new AtomicLong();
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean informers = new AtomicBoolean();
  private final Leadership leadership = Leadership.elected();
  private final HttpClient http = HttpClient.newHttpClient();
  private OpsServer server;
  private int port;

  @BeforeEach
  void setUp() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    server =
        new OpsServer(
            vertx,
            registry,
            new PoolGauges(List::of, registry),
            new Heartbeat(vertx, nanos::get, 10_000),
            new Readiness(started::get, informers::get, leadership));
    port = server.listen(0).toCompletionStage().toCompletableFuture().get();
  }

  @AfterEach
  void tearDown() {
    server.close().toCompletionStage().toCompletableFuture().join();
    vertx.close().toCompletionStage().toCompletableFuture().join();
  }

  @Test
  void healthzFailsWhenTheEventLoopStopsTicking() throws Exception {
    assertThat(get("/healthz").statusCode()).isEqualTo(200);
    nanos.addAndGet(Duration.ofSeconds(11).toNanos());
    HttpResponse<String> stuck = get("/healthz");
    assertThat(stuck.statusCode()).isEqualTo(503);
    assertThat(stuck.body()).contains("event loop stuck");
  }

  @Test
  void readyzFollowsStartLeadershipAndInformers() throws Exception {
    assertThat(get("/readyz").statusCode()).isEqualTo(503);
    started.set(true);
    assertThat(get("/readyz").body()).contains("no leader seen yet");
    leadership.newLeader("vigil-other");
    HttpResponse<String> standby = get("/readyz");
    assertThat(standby.statusCode()).isEqualTo(200);
    assertThat(standby.body()).contains("standing by; leader is vigil-other");
    leadership.startedLeading();
    assertThat(get("/readyz").statusCode()).isEqualTo(503);
    informers.set(true);
    assertThat(get("/readyz").statusCode()).isEqualTo(200);
    leadership.stoppedLeading();
    assertThat(get("/readyz").body()).contains("lost the lease");
  }

  @Test
  void metricsAreServedAsPrometheusText() throws Exception {
    HttpResponse<String> r = get("/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
  }

  @Test
  void unknownPathsAndWritesAreRefused() throws Exception {
    assertThat(get("/nope").statusCode()).isEqualTo(404);
    HttpResponse<String> post =
        http.send(
            HttpRequest.newBuilder(uri("/metrics"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(post.statusCode()).isEqualTo(405);
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
