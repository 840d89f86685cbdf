package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.CheckSpecBuilder;
import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.LoopbackServers;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A tenant's regular expression runs on a shared probe event loop, so its matching time must not
 * depend on the pattern (issue 31 row 1). {@code (.*a){12}$} over a 4 KiB body of {@code a} then
 * {@code !} does not finish with a backtracking engine; here it must give its verdict through the
 * real probers against real loopback servers, and a healthy backend probed on the same event loop
 * must still get its own. The bound (10 s) is far above the milliseconds it takes, so a loaded
 * machine does not fail it; a backtracking engine never gets there.
 */
class TenantPatternTest {
  private static final String EXPLOSIVE = "(.*a){12}$";
  private static final String HOSTILE_BODY = "a".repeat(4096) + "!";
  private static final long BOUND_SECONDS = 10;

  static Vertx vertx;
  static LoopbackServers servers;
  static HttpProber http1;
  static Http2Prober http2;
  static Context context;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    servers = new LoopbackServers(vertx);
    http1 = new HttpProber(vertx);
    http2 = new Http2Prober(vertx);
    context = vertx.getOrCreateContext();
  }

  @AfterAll
  static void stop() {
    LoopbackServers.await(http1.close());
    LoopbackServers.await(http2.close());
    servers.close();
    LoopbackServers.await(vertx.close());
  }

  @Test
  void anExplosiveBodyMatchFailsQuicklyAndTheLoopKeepsProbingOthers() throws Exception {
    int hostile = answering(HOSTILE_BODY, Map.of());
    int healthy = answering("ok", Map.of());

    Future<ProbeResult> slow = probe(http1, hostile, spec().bodyMatch(EXPLOSIVE));
    Future<ProbeResult> other = probe(http1, healthy, spec());

    ProbeResult verdict = within(slow);
    assertThat(verdict.reason()).isEqualTo(Reason.BODY_MISMATCH);
    assertThat(within(other).passed()).isTrue();
  }

  @Test
  void anExplosiveBodyMatchOverHttp2FailsQuickly() throws Exception {
    int hostile = answering(HOSTILE_BODY, Map.of());

    ProbeResult verdict = within(probe(http2, hostile, spec().bodyMatch(EXPLOSIVE).http2(true)));

    assertThat(verdict.reason()).isEqualTo(Reason.BODY_MISMATCH);
  }

  @Test
  void anExplosiveHeaderValueMatchFailsQuickly() throws Exception {
    int hostile = answering("ok", Map.of("X-Ready", "a".repeat(2048) + "!"));
    CheckSpec.Http http =
        new CheckSpec.Http(
            "GET",
            "/healthz",
            null,
            Map.of(),
            ExpectedStatuses.DEFAULT,
            null,
            null,
            List.of(CheckSpec.HeaderMatch.of(0, "X-Ready", EXPLOSIVE)),
            null);

    ProbeResult verdict = within(probe(http1, hostile, spec().http(http)));

    assertThat(verdict.reason()).isEqualTo(Reason.HEADER_MISMATCH);
  }

  @Test
  void aPatternOutsideRe2IsRefusedNamingTheField() {
    assertThatThrownBy(() -> CheckSpec.Http.compileBodyMatch("(a)\\1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("active.http.bodyMatch: not a valid RE2 expression");
    assertThatThrownBy(() -> CheckSpec.HeaderMatch.of(2, "X-Ready", "^(?=yes)"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("active.http.headerMatch[2].value: not a valid RE2 expression");
  }

  private static CheckSpecBuilder spec() {
    return CheckSpec.builder().protocol(ProbeProtocol.HTTP).timeout(Duration.ofSeconds(5));
  }

  private static Future<ProbeResult> probe(Prober prober, int port, CheckSpecBuilder spec) {
    CheckSpec s = spec.build();
    Promise<ProbeResult> promise = Promise.promise();
    context.runOnContext(
        v -> prober.probe(new ProbeTarget("127.0.0.1", port), s).onComplete(promise));
    return promise.future();
  }

  private static ProbeResult within(Future<ProbeResult> result) throws Exception {
    return result.toCompletionStage().toCompletableFuture().get(BOUND_SECONDS, TimeUnit.SECONDS);
  }

  /** A Vert.x server (HTTP/1.1 and h2c) answering 200 with {@code body} and {@code headers}. */
  private static int answering(String body, Map<String, String> headers) {
    HttpServer server =
        vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
    server.requestHandler(
        request -> {
          headers.forEach(request.response()::putHeader);
          request.response().end(body);
        });
    LoopbackServers.await(server.listen());
    return server.actualPort();
  }
}
