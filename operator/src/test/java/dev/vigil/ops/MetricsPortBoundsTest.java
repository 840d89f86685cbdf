package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.security.ConnectionGate;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.ReviewBudget;
import dev.vigil.security.Reviewer;
import dev.vigil.security.ServingCertificate;
import dev.vigil.testing.LoopbackSockets;
import dev.vigil.testing.TestTls;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The metrics port has the intake's bounds (issue 31, item 6), over real loopback sockets: a head
 * trickled a byte per 100 ms is cut at the head deadline, one address cannot take every connection,
 * and concurrent requests with one token share one review while reviews in flight are bounded.
 */
class MetricsPortBoundsTest {
  private final Vertx vertx = Vertx.vertx();
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private OpsServer server;
  private int port;

  private void start(ConnectionGate.Limits limits, Reviewer access) throws Exception {
    server =
        new OpsServer(
            vertx,
            registry,
            new PoolGauges(List::of, registry),
            new Heartbeat(vertx, System::nanoTime, 10_000),
            new Readiness(() -> true, () -> true, Leadership.sole()),
            limits);
    if (access != null) {
      server.secure(
          new ServingCertificate(vertx, TestTls.certFile(), TestTls.keyFile()),
          access,
          new ReviewBudget(OpsServer.REVIEW_BUDGET.policy(), 100, 100),
          System::currentTimeMillis);
    }
    port = server.listen(0).toCompletionStage().toCompletableFuture().get();
  }

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.close().toCompletionStage().toCompletableFuture().join();
    }
    vertx.close().toCompletionStage().toCompletableFuture().join();
  }

  @Test
  void aHeadTrickledOneBytePer100msIsCutAtTheHeadDeadline() throws Exception {
    start(new ConnectionGate.Limits(64, 16, 1_000, 10_000), null);
    try (Socket s = socketFrom("127.0.0.2")) {
      // Without a head deadline nothing closes it: the port had no timeout at all.
      Duration closed =
          LoopbackSockets.trickleUntilClosed(
              s, "GET /metrics HTTP/1.1\r\nX-Slow: ", Duration.ofSeconds(8));
      assertThat(closed).as("closed within 8 s although a byte came every 100 ms").isNotNull();
    }
    assertThat(
            registry
                .counter("vigil_metrics_connections_closed_total", "reason", "header_timeout")
                .count())
        .isEqualTo(1);
  }

  @Test
  void oneAddressCannotTakeEveryConnection() throws Exception {
    start(new ConnectionGate.Limits(64, 2, 5_000, 10_000), null);
    List<Socket> held = new ArrayList<>();
    try {
      held.add(socketFrom("127.0.0.2"));
      held.add(socketFrom("127.0.0.2"));
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> server.connections() == 2);
      try (Socket third = socketFrom("127.0.0.2")) {
        assertThat(get(third, "/healthz")).as("the 3rd from 127.0.0.2").isEmpty();
      }
      try (Socket other = socketFrom("127.0.0.3")) {
        assertThat(get(other, "/healthz")).startsWith("HTTP/1.1 200");
      }
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void concurrentRequestsWithOneTokenShareOneReviewAndReviewsInFlightAreBounded() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger reviews = new AtomicInteger();
    start(
        new ConnectionGate.Limits(64, 64, 5_000, 30_000), // the client opens one per request
        new Reviewer() {
          @Override
          public Optional<Identity> authenticate(String token) {
            reviews.incrementAndGet();
            try {
              release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return Optional.of(new Identity("prometheus", "uid", List.of(), Map.of()));
          }

          @Override
          public boolean allows(Identity caller, Permission permission) {
            return permission.equals(Permission.READ_METRICS);
          }
        });
    HttpClient https = TestTls.client();
    List<CompletableFuture<HttpResponse<String>>> same = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      same.add(https.sendAsync(request("prometheus"), HttpResponse.BodyHandlers.ofString()));
    }
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> reviews.get() >= 1);
    Thread.sleep(1_000); // the other three reach the server meanwhile
    assertThat(reviews).as("one review for 4 requests with one token").hasValue(1);
    List<CompletableFuture<HttpResponse<String>>> distinct = new ArrayList<>();
    for (int i = 0; i < OpsServer.MAX_PENDING_REVIEWS + 4; i++) {
      distinct.add(https.sendAsync(request("token-" + i), HttpResponse.BodyHandlers.ofString()));
    }
    // Those past the bound are answered at once; the others wait for the held reviews.
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> distinct.stream().filter(CompletableFuture::isDone).count() >= 5);
    long busy =
        distinct.stream()
            .filter(CompletableFuture::isDone)
            .filter(f -> f.join().statusCode() == 503)
            .count();
    assertThat(busy).as("reviews past the bound answered 503 at once").isGreaterThanOrEqualTo(5);
    assertThat(reviews.get())
        .as("one review for the shared token, the rest up to the bound")
        .isLessThanOrEqualTo(OpsServer.MAX_PENDING_REVIEWS);
    release.countDown();
    for (CompletableFuture<HttpResponse<String>> f : same) {
      assertThat(f.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  private HttpRequest request(String token) {
    return HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/metrics"))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + token)
        .build();
  }

  private Socket socketFrom(String local) throws IOException {
    return LoopbackSockets.from(local, port);
  }

  /** The reply's status line and headers, or "" when the connection closed without one. */
  private static String get(Socket s, String path) {
    return LoopbackSockets.replyHead(s, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
  }
}
