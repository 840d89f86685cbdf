package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.CheckSpecBuilder;
import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProberRig;
import dev.vigil.probe.Reason;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code active.http.version: "2"} against real and misbehaving HTTP/2 servers on 127.0.0.1: h2c
 * with prior knowledge, ALPN h2 over TLS, a server that resets the stream, one that speaks only
 * HTTP/1.1, one that never answers. Every case asserts verdict, reason and detail.
 */
class Http2ProbeTest {
  @AutoClose static ProberRig<Http2Prober> rig;

  @BeforeAll
  static void start() {
    rig = ProberRig.start(Http2Prober::new);
  }

  static int server(HttpServerOptions options, Handler<HttpServerRequest> handler) {
    return rig.servers().http(options, server -> server.requestHandler(handler));
  }

  static HttpServerOptions tls() {
    return new HttpServerOptions()
        .setSsl(true)
        .setUseAlpn(true)
        .setKeyCertOptions(rig.servers().certificate().keyCertOptions());
  }

  static ProbeResult probe(int port, CheckSpecBuilder spec) {
    return rig.probe(port, spec.http2(true).build());
  }

  static CheckSpecBuilder h2c() {
    return CheckSpec.builder().protocol(ProbeProtocol.HTTP).timeout(Duration.ofSeconds(5));
  }

  static CheckSpecBuilder h2() {
    return CheckSpec.builder()
        .protocol(ProbeProtocol.HTTPS)
        .timeout(Duration.ofSeconds(10))
        .tls(new CheckSpec.Tls(true, null));
  }

  @Test
  void h2cWithPriorKnowledgePassesOnItsStatus() throws Exception {
    CompletableFuture<HttpVersion> version = new CompletableFuture<>();
    int port =
        server(
            new HttpServerOptions(),
            r -> {
              version.complete(r.version());
              r.response().end("ok");
            });
    ProbeResult r = probe(port, h2c());
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(r.detail()).isEqualTo("status 200");
    assertThat(version.get(5, TimeUnit.SECONDS)).isEqualTo(HttpVersion.HTTP_2);
  }

  @Test
  void alpnH2OverTlsPassesAndTheStatusComesFromStatusPseudoHeader() throws Exception {
    CompletableFuture<HttpVersion> version = new CompletableFuture<>();
    int port =
        server(
            tls(),
            r -> {
              version.complete(r.version());
              r.response().setStatusCode(503).end();
            });
    ProbeResult r = probe(port, h2());
    assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.STATUS);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.detail()).isEqualTo("status 503");
    assertThat(version.get(5, TimeUnit.SECONDS)).isEqualTo(HttpVersion.HTTP_2);
  }

  @Test
  void aServerThatResetsTheStreamFails() {
    int port = server(new HttpServerOptions(), r -> r.response().reset(8));
    ProbeResult r = probe(port, h2c());
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.STREAM_RESET);
    assertThat(r.detail()).isEqualTo("stream reset (code 8)");
  }

  @Test
  void anHttp11OnlyServerFailsWithoutAStatus() {
    int port = rig.servers().replying("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    ProbeResult r = probe(port, h2c());
    assertThat(r.passed()).as(r.toString()).isFalse();
    assertThat(r.reason()).isEqualTo(Reason.MALFORMED_RESPONSE);
    assertThat(r.detail()).startsWith("not an HTTP/2 answer: ");
    assertThat(r.statusCode()).isZero();
  }

  @Test
  void aServerThatNeverAnswersTimesOut() {
    int port = server(new HttpServerOptions(), r -> {});
    ProbeResult r = probe(port, h2c().timeout(Duration.ofMillis(300)));
    assertThat(r.reason()).isEqualTo(Reason.TIMEOUT);
    assertThat(r.detail()).isEqualTo("timeout");
  }

  @Test
  void failFastHeadersAndBodyApplyAsOverHttp11() {
    int port =
        server(
            new HttpServerOptions(),
            r -> {
              switch (r.path()) {
                case "/down" -> r.response().setStatusCode(503).end();
                case "/header" -> r.response().putHeader("x-ready", "no").end("ok");
                default -> r.bodyHandler(b -> r.response().putHeader("x-ready", "yes").end(b));
              }
            });
    CheckSpec.Http down =
        new CheckSpec.Http(
            "GET",
            "/down",
            null,
            Map.of(),
            ExpectedStatuses.DEFAULT,
            null,
            null,
            null,
            ExpectedStatuses.parse("f", "500-599"));
    ProbeResult fast = probe(port, h2c().http(down));
    assertThat(fast.reason()).isEqualTo(Reason.FAIL_FAST_STATUS);
    assertThat(fast.detail()).isEqualTo("status 503 (fail-fast)");

    CheckSpec.Http header =
        new CheckSpec.Http(
            "GET",
            "/header",
            null,
            Map.of(),
            ExpectedStatuses.DEFAULT,
            null,
            null,
            List.of(CheckSpec.HeaderMatch.of(0, "X-Ready", "^yes$")),
            null);
    ProbeResult wrong = probe(port, h2c().http(header));
    assertThat(wrong.reason()).isEqualTo(Reason.HEADER_MISMATCH);
    assertThat(wrong.detail()).isEqualTo("header X-Ready: \"no\" does not match ^yes$");

    CheckSpec.Http echo =
        new CheckSpec.Http(
            "POST",
            "/echo",
            null,
            Map.of(),
            ExpectedStatuses.DEFAULT,
            CheckSpec.Http.compileBodyMatch("ping-42"),
            "ping-42",
            List.of(CheckSpec.HeaderMatch.of(0, "x-ready", "yes")),
            null);
    ProbeResult echoed = probe(port, h2c().http(echo));
    assertThat(echoed.passed()).as(echoed.toString()).isTrue();
  }
}
