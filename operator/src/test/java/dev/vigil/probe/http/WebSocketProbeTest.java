package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProberRig;
import dev.vigil.probe.Reason;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code protocol: WebSocket} against real and misbehaving servers on 127.0.0.1: a pass needs 101,
 * {@code Upgrade: websocket} and the {@code Sec-WebSocket-Accept} of the probe's own key. Every
 * case asserts verdict, reason and detail.
 */
class WebSocketProbeTest {
  @AutoClose static ProberRig<HttpProber> rig;

  @BeforeAll
  static void start() {
    rig = ProberRig.start(HttpProber::new);
  }

  static ProbeResult probe(int port, CheckSpec.Tls tls, Duration timeout) {
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.WEBSOCKET)
            .timeout(timeout)
            .tls(tls)
            .websocket(new CheckSpec.WebSocket("/ws?probe=1"))
            .build();
    return rig.probe(port, spec);
  }

  static ProbeResult probe(int port) {
    return probe(port, CheckSpec.Tls.NONE, Duration.ofSeconds(3));
  }

  /** A real WebSocket server (Vert.x), recording the path of the upgrade it accepted. */
  static int realServer(HttpServerOptions options, CompletableFuture<String> path) {
    return rig.servers()
        .http(
            options,
            server ->
                server
                    .webSocketHandler(ws -> path.complete(ws.uri()))
                    .requestHandler(r -> r.response().setStatusCode(400).end()));
  }

  /** A raw server answering the upgrade with the head {@code answer} makes of the request's key. */
  static int answering(Function<String, String> answer) {
    return rig.servers()
        .raw(
            c ->
                c.handler(
                    request -> {
                      c.handler(null);
                      String key = null;
                      for (String line : request.toString().split("\r\n")) {
                        if (line.toLowerCase().startsWith("sec-websocket-key:")) {
                          key = line.substring(18).trim();
                        }
                      }
                      c.write(answer.apply(key) + "\r\n");
                    }));
  }

  @Test
  void aRealWebSocketServerPasses() throws Exception {
    CompletableFuture<String> path = new CompletableFuture<>();
    ProbeResult r = probe(realServer(new HttpServerOptions(), path));
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(r.reason()).isEqualTo(Reason.OK);
    assertThat(r.detail()).isEqualTo("status 101");
    assertThat(path.get(5, TimeUnit.SECONDS)).isEqualTo("/ws?probe=1");
  }

  @Test
  void wssWithTlsPasses() throws Exception {
    CompletableFuture<String> path = new CompletableFuture<>();
    int port =
        realServer(
            new HttpServerOptions()
                .setSsl(true)
                .setKeyCertOptions(rig.servers().certificate().keyCertOptions()),
            path);
    ProbeResult r = probe(port, new CheckSpec.Tls(true, null), Duration.ofSeconds(10));
    assertThat(r.passed()).as(r.toString()).isTrue();
  }

  @Test
  void a101WithoutTheAcceptHeaderFails() {
    ProbeResult r =
        probe(
            answering(
                key ->
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"));
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).isEqualTo(Reason.WEBSOCKET_HANDSHAKE);
    assertThat(r.detail()).isEqualTo("101 without Sec-WebSocket-Accept");
  }

  @Test
  void aWrongAcceptValueFails() {
    String wrong = WebSocketHandshake.expectedAccept("dGhlIHNhbXBsZSBub25jZQ==");
    ProbeResult r =
        probe(
            answering(
                key ->
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: "
                        + wrong
                        + "\r\n"));
    assertThat(r.reason()).isEqualTo(Reason.WEBSOCKET_HANDSHAKE);
    assertThat(r.detail())
        .isEqualTo("Sec-WebSocket-Accept \"" + wrong + "\" does not answer the key");
  }

  @Test
  void theRightAcceptWithoutUpgradeWebsocketFails() {
    ProbeResult r =
        probe(
            answering(
                key ->
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: "
                        + WebSocketHandshake.expectedAccept(key)
                        + "\r\n"));
    assertThat(r.reason()).isEqualTo(Reason.WEBSOCKET_HANDSHAKE);
    assertThat(r.detail()).isEqualTo("101 without Upgrade: websocket");
  }

  @Test
  void theRightAnswerFromARawServerPasses() {
    ProbeResult r =
        probe(
            answering(
                key ->
                    "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nConnection: Upgrade\r\n"
                        + "sec-websocket-accept: "
                        + WebSocketHandshake.expectedAccept(key)
                        + "\r\n"));
    assertThat(r.passed()).as(r.toString()).isTrue();
  }

  @Test
  void aServerThatIgnoresTheUpgradeFailsOnItsStatus() {
    ProbeResult r = probe(rig.servers().replying("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
    assertThat(r.reason()).isEqualTo(Reason.STATUS);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.detail()).isEqualTo("status 200, not 101");
  }

  @Test
  void aServerThatNeverAnswersTheUpgradeTimesOut() {
    ProbeResult r = probe(rig.servers().raw(c -> {}), CheckSpec.Tls.NONE, Duration.ofMillis(300));
    assertThat(r.reason()).isEqualTo(Reason.TIMEOUT);
  }

  @Test
  void theAcceptValueIsRfc6455s() {
    // RFC 6455 section 1.3's example
    assertThat(WebSocketHandshake.expectedAccept("dGhlIHNhbXBsZSBub25jZQ=="))
        .isEqualTo("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  }
}
