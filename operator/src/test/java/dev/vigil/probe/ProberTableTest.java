package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.grpc.GrpcProber;
import dev.vigil.probe.http.Http2Prober;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.http.StatusLineClassifier;
import dev.vigil.probe.tcp.TcpProber;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServerOptions;
import java.time.Duration;
import java.util.Map;
import java.util.function.ToIntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every prober against real, misbehaving servers on 127.0.0.1: one case per row, on Netty's NIO
 * transport ({@link NativeTransportProberTableTest} runs the same rows on epoll).
 */
class ProberTableTest {

  /** Deadline of the cases that must end in a timeout: they take exactly this long. */
  static final Duration TIMEOUT = Duration.ofMillis(400);

  /**
   * Deadline of every other case. They end as soon as the server answers (a few ms); the long
   * deadline only keeps a loaded 2-core machine (TLS handshakes of ~300 ms) from turning a verdict
   * into a timeout.
   */
  static final Duration SLOW_TIMEOUT = Duration.ofSeconds(3);

  /**
   * How late a timeout verdict may come after its deadline: the Vert.x timer fires on a busy event
   * loop and the result hops to the test thread. Well under {@link #TIMEOUT}, so a deadline armed
   * at twice the timeout fails.
   */
  static final long TIMER_SLACK_MS = 250;

  @AutoClose static ProberRig<ProtocolProber> rig;

  @BeforeAll
  static void start() {
    startOn(new VertxOptions().setPreferNativeTransport(false));
    assertThat(rig.vertx().isNativeTransportEnabled()).isFalse();
  }

  static void startOn(VertxOptions options) {
    rig =
        ProberRig.start(
            options,
            v ->
                new ProtocolProber(
                    new HttpProber(v), new TcpProber(v), new GrpcProber(v), new Http2Prober(v)));
    warmUp();
  }

  /**
   * The first probe of each kind pays for class loading, JIT and TLS context creation (seconds on a
   * loaded machine); pay it here, so the short deadlines below measure the servers only.
   */
  static void warmUp() {
    Duration generous = Duration.ofSeconds(20);
    int ok = rig.servers().replying("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    int tls = rig.servers().tlsSelfSigned();
    int grpc = rig.servers().grpcHealth(Map.of("", ServingStatus.SERVING));
    ProbeTarget local = new ProbeTarget("127.0.0.1", 1);
    CheckSpecBuilder spec = CheckSpec.builder().timeout(generous);
    probe(new ProbeTarget("127.0.0.1", ok), spec.protocol(ProbeProtocol.HTTP).build());
    probe(new ProbeTarget("127.0.0.1", tls), spec.protocol(ProbeProtocol.HTTPS).build());
    probe(
        new ProbeTarget("127.0.0.1", tls),
        spec.protocol(ProbeProtocol.HTTPS).tls(new CheckSpec.Tls(true, null)).build());
    probe(
        new ProbeTarget("127.0.0.1", grpc),
        spec.protocol(ProbeProtocol.GRPC).tls(CheckSpec.Tls.NONE).build());
    probe(new ProbeTarget("127.0.0.1", ok), spec.protocol(ProbeProtocol.TCP).build());
    assertThat(local.port()).isEqualTo(1);
  }

  /**
   * One row: a server, a check, the expected verdict and reason, and (for HTTP rows decided by the
   * status line) the raw line, which {@link StatusLineClassifier} must judge the same way.
   */
  record Case(
      String name,
      ToIntFunction<LoopbackServers> server,
      CheckSpec spec,
      boolean pass,
      Reason reason,
      String statusLine) {
    @Override
    public String toString() {
      return name;
    }
  }

  static CheckSpecBuilder http() {
    return CheckSpec.builder().protocol(ProbeProtocol.HTTP).timeout(SLOW_TIMEOUT);
  }

  static Case status(String name, String line, boolean pass, Reason reason) {
    return new Case(
        name,
        s -> s.replying(line + "\r\nContent-Length: 2\r\n\r\nok"),
        http().build(),
        pass,
        reason,
        line);
  }

  static Case http(String name, ToIntFunction<LoopbackServers> server, boolean pass, Reason r) {
    return new Case(name, server, http().build(), pass, r, null);
  }

  static Stream<Case> cases() {
    CheckSpec tcpPing =
        CheckSpec.builder()
            .protocol(ProbeProtocol.TCP)
            .timeout(SLOW_TIMEOUT)
            .tcp(new CheckSpec.Tcp("PING\r\n", "+PONG"))
            .build();
    CheckSpec grpc = CheckSpec.builder().protocol(ProbeProtocol.GRPC).timeout(SLOW_TIMEOUT).build();
    Map<String, ServingStatus> health =
        Map.of("", ServingStatus.SERVING, "db", ServingStatus.NOT_SERVING);
    return Stream.of(
        status("200 passes", "HTTP/1.1 200 OK", true, Reason.OK),
        status("204 passes", "HTTP/1.1 204 No Content", true, Reason.OK),
        status("301 passes", "HTTP/1.1 301 Moved Permanently", true, Reason.OK),
        status("399 passes", "HTTP/1.1 399 Whatever", true, Reason.OK),
        status("400 fails", "HTTP/1.1 400 Bad Request", false, Reason.STATUS),
        status(
            "404 fails: the health route is missing",
            "HTTP/1.1 404 Not Found",
            false,
            Reason.STATUS),
        status("500 fails", "HTTP/1.1 500 Internal Server Error", false, Reason.STATUS),
        status(
            "503 with a misleading reason phrase fails",
            "HTTP/1.1 503 Backend 200 ms slow",
            false,
            Reason.STATUS),
        status("200 without a reason phrase passes", "HTTP/1.1 200", true, Reason.OK),
        new Case(
            "HTTP/1.0 200 passes",
            s -> s.replying("HTTP/1.0 200 OK\r\n\r\nok"),
            http().build(),
            true,
            Reason.OK,
            "HTTP/1.0 200 OK"),
        status(
            "garbage first line is malformed",
            "SSH-2.0-OpenSSH_9.2p1",
            false,
            Reason.MALFORMED_RESPONSE),
        status(
            "four-digit status is malformed", "HTTP/1.1 2000 OK", false, Reason.MALFORMED_RESPONSE),
        http(
            "empty reply then close",
            s -> s.raw(c -> c.handler(b -> c.close())),
            false,
            Reason.CONNECTION_CLOSED),
        http("accept then hang times out", s -> s.raw(c -> {}), false, Reason.TIMEOUT),
        http(
            "status line then hang times out",
            s -> s.raw(c -> c.handler(b -> c.write("HTTP/1.1 200 OK\r\n"))),
            false,
            Reason.TIMEOUT),
        http(
            "headers trickling one byte at a time past the deadline",
            ProberTableTest::trickle,
            false,
            Reason.TIMEOUT),
        new Case(
            "body that never ends: verdict from the status, bounded read",
            s -> endlessBody(s),
            http().build(),
            true,
            Reason.OK,
            null),
        new Case(
            "body that never ends: bodyMatch found in the first 64 KiB",
            s -> endlessBody(s),
            http().bodyMatch("status: ok").build(),
            true,
            Reason.OK,
            null),
        new Case(
            "body that never ends: bodyMatch gives up after 64 KiB",
            s -> endlessBody(s),
            http().bodyMatch("never-there").build(),
            false,
            Reason.BODY_MISMATCH,
            null),
        http(
            "1 MiB header block is malformed",
            ProberTableTest::hugeHeaders,
            false,
            Reason.MALFORMED_RESPONSE),
        http("connection refused", LoopbackServers::refusing, false, Reason.CONNECTION_REFUSED),
        http(
            "connection reset mid-response",
            ProberTableTest::resetMidResponse,
            false,
            Reason.CONNECTION_RESET),
        new Case(
            "TLS self-signed fails without insecureSkipVerify",
            LoopbackServers::tlsSelfSigned,
            http().protocol(ProbeProtocol.HTTPS).timeout(SLOW_TIMEOUT).build(),
            false,
            Reason.TLS_UNKNOWN_CA,
            null),
        new Case(
            "TLS self-signed passes with insecureSkipVerify",
            LoopbackServers::tlsSelfSigned,
            http()
                .protocol(ProbeProtocol.HTTPS)
                .tls(new CheckSpec.Tls(true, "localhost"))
                .timeout(SLOW_TIMEOUT)
                .build(),
            true,
            Reason.OK,
            null),
        new Case(
            "body regex match passes",
            s -> s.replying("HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"db\":\"up\"}\r\n\r\n"),
            http().bodyMatch("\"db\":\"up\"").build(),
            true,
            Reason.OK,
            null),
        new Case(
            "body regex mismatch fails",
            s -> s.replying("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"db\":\"down\"}"),
            http().bodyMatch("\"db\":\"up\"").build(),
            false,
            Reason.BODY_MISMATCH,
            null),
        new Case(
            "chunked body regex match passes",
            s ->
                s.replying(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "5\r\n{\"db\"\r\n6\r\n:\"up\"}\r\n0\r\n\r\n"),
            http().bodyMatch("\\{\"db\":\"up\"\\}").build(),
            true,
            Reason.OK,
            null),
        new Case(
            "100 Continue then 200 passes",
            s ->
                s.replying(
                    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            http().build(),
            true,
            Reason.OK,
            null),
        new Case("TCP send/expect match", ProberTableTest::pong, tcpPing, true, Reason.OK, null),
        new Case(
            "TCP send/expect mismatch",
            ProberTableTest::pong,
            tcpPing.toBuilder().tcp(new CheckSpec.Tcp("PING\r\n", "+OK")).build(),
            false,
            Reason.EXPECT_MISMATCH,
            null),
        new Case(
            "TCP connect only",
            s -> s.raw(c -> {}),
            tcpPing.toBuilder().tcp(CheckSpec.Tcp.DEFAULT).build(),
            true,
            Reason.OK,
            null),
        new Case(
            "TCP refused",
            LoopbackServers::refusing,
            tcpPing,
            false,
            Reason.CONNECTION_REFUSED,
            null),
        new Case(
            "TCP hang on expect times out",
            s -> s.raw(c -> {}),
            tcpPing,
            false,
            Reason.TIMEOUT,
            null),
        new Case("gRPC SERVING", s -> s.grpcHealth(health), grpc, true, Reason.OK, null),
        new Case(
            "gRPC NOT_SERVING",
            s -> s.grpcHealth(health),
            grpc.toBuilder().grpc(new CheckSpec.Grpc("db")).build(),
            false,
            Reason.GRPC_NOT_SERVING,
            null),
        new Case(
            "gRPC unknown service",
            s -> s.grpcHealth(health),
            grpc.toBuilder().grpc(new CheckSpec.Grpc("nope")).build(),
            false,
            Reason.GRPC_SERVICE_UNKNOWN,
            null),
        new Case(
            "gRPC server without a health service",
            s -> s.grpcHealth(null),
            grpc,
            false,
            Reason.GRPC_UNIMPLEMENTED,
            null),
        new Case(
            "gRPC against a server that is not gRPC at all",
            s -> s.replying("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
            grpc,
            false,
            Reason.GRPC_PROTOCOL,
            null),
        new Case(
            "gRPC connection refused",
            LoopbackServers::refusing,
            grpc,
            false,
            Reason.CONNECTION_REFUSED,
            null),
        new Case(
            "gRPC accept then hang times out",
            s -> s.raw(c -> {}),
            grpc.toBuilder().timeout(TIMEOUT).build(),
            false,
            Reason.TIMEOUT,
            null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void probesGiveTheExpectedVerdictAndReason(Case c) {
    int port = c.server().applyAsInt(rig.servers());
    CheckSpec spec =
        c.reason() == Reason.TIMEOUT ? c.spec().toBuilder().timeout(TIMEOUT).build() : c.spec();
    long started = System.nanoTime();
    ProbeResult result = probe(new ProbeTarget("127.0.0.1", port), spec);
    long tookMs = (System.nanoTime() - started) / 1_000_000;

    assertThat(result.passed()).as("%s: %s", c.name(), result).isEqualTo(c.pass());
    assertThat(result.reason()).as("%s: %s", c.name(), result).isEqualTo(c.reason());
    if (c.reason() == Reason.TIMEOUT) {
      assertThat(tookMs)
          .as("a timeout takes the deadline, give or take a timer tick and a loaded machine")
          .isBetween(TIMEOUT.toMillis() - 10, TIMEOUT.toMillis() + TIMER_SLACK_MS);
    } else {
      assertThat(tookMs)
          .as("a decided answer does not wait for the deadline")
          .isLessThan(SLOW_TIMEOUT.toMillis() / 2);
    }
    if (c.statusLine() != null) {
      ProbeResult offline =
          new StatusLineClassifier(c.spec().http().expectedStatuses()).classify(c.statusLine());
      assertThat(offline.reason())
          .as("classifier agrees on %s", c.statusLine())
          .isEqualTo(result.reason());
      assertThat(offline.statusCode()).isEqualTo(result.statusCode());
    }
  }

  /**
   * Odd status lines, each with the verdict RFC 9112 section 4 gives it ({@code HTTP-version SP
   * 3DIGIT SP [reason-phrase]}, the name case-sensitive, one digit on each side of the dot): only a
   * well-formed line yields a status code, and the default expected statuses are 200-399.
   */
  static Stream<Arguments> oddStatusLines() {
    return Stream.of(
        odd("HTTP/1.10 200 OK", false, Reason.MALFORMED_RESPONSE, 0),
        odd("http/1.1 200 OK", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/1.1 200OK", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/1.1  200 OK", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/2 200", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/1.1 099 Low", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/1.1 600 High", false, Reason.STATUS, 600),
        odd("HTTP/1.1 20", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/1.1 200\tOK", false, Reason.MALFORMED_RESPONSE, 0),
        odd("HTTP/1.1 302 ", true, Reason.OK, 302),
        odd("HTTP/1.1 -200 OK", false, Reason.MALFORMED_RESPONSE, 0),
        odd(" HTTP/1.1 200 OK", false, Reason.MALFORMED_RESPONSE, 0),
        odd("ICY 200 OK", false, Reason.MALFORMED_RESPONSE, 0));
  }

  static Arguments odd(String line, boolean pass, Reason reason, int statusCode) {
    return Arguments.of(
        Named.of(line.replace("\t", "\\t").replace(" ", "\u2423"), line), pass, reason, statusCode);
  }

  /** Each odd line gets its own expected verdict; the offline classifier must reach the same. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("oddStatusLines")
  void oddStatusLinesGetTheirExpectedVerdict(
      String line, boolean pass, Reason reason, int statusCode) {
    int port = rig.servers().replying(line + "\r\nContent-Length: 0\r\n\r\n");
    ProbeResult result = probe(new ProbeTarget("127.0.0.1", port), http().build());
    ProbeResult offline = new StatusLineClassifier(ExpectedStatuses.DEFAULT).classify(line);

    for (ProbeResult r : new ProbeResult[] {result, offline}) {
      assertThat(r.passed()).as("%s -> %s", line, r).isEqualTo(pass);
      assertThat(r.reason()).as("%s -> %s", line, r).isEqualTo(reason);
      assertThat(r.statusCode()).as("%s -> %s", line, r).isEqualTo(statusCode);
    }
    if (reason == Reason.MALFORMED_RESPONSE) {
      assertThat(result.detail()).startsWith("malformed status line: ");
    }
  }

  static ProbeResult probe(ProbeTarget target, CheckSpec spec) {
    return rig.probe(target, spec);
  }

  static int trickle(LoopbackServers s) {
    byte[] reply = ("HTTP/1.1 200 OK\r\nX-Slow: " + "a".repeat(200) + "\r\n\r\n").getBytes();
    return s.raw(
        c ->
            c.handler(
                request -> {
                  c.handler(null);
                  int[] next = {0};
                  long timer =
                      rig.vertx()
                          .setPeriodic(
                              20,
                              id -> {
                                if (next[0] < reply.length) {
                                  c.write(Buffer.buffer(new byte[] {reply[next[0]++]}));
                                }
                              });
                  c.closeHandler(v -> rig.vertx().cancelTimer(timer));
                }));
  }

  static int endlessBody(LoopbackServers s) {
    Buffer chunk = Buffer.buffer("status: ok\n" + "x".repeat(8 * 1024));
    return s.raw(
        c ->
            c.handler(
                request -> {
                  c.handler(null);
                  c.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
                  long timer =
                      rig.vertx()
                          .setPeriodic(
                              1,
                              id -> {
                                if (!c.writeQueueFull()) {
                                  c.write(chunk);
                                }
                              });
                  c.closeHandler(v -> rig.vertx().cancelTimer(timer));
                  c.exceptionHandler(t -> rig.vertx().cancelTimer(timer));
                }));
  }

  static int hugeHeaders(LoopbackServers s) {
    StringBuilder reply = new StringBuilder("HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 1024; i++) {
      reply.append("X-Pad-").append(i).append(": ").append("p".repeat(1000)).append("\r\n");
    }
    Buffer mebibyte = Buffer.buffer(reply.append("Content-Length: 0\r\n\r\n").toString());
    return s.raw(c -> c.handler(request -> c.write(mebibyte)));
  }

  static int resetMidResponse(LoopbackServers s) {
    return s.raw(
        new NetServerOptions().setSoLinger(0),
        c ->
            c.handler(
                request -> {
                  c.handler(null);
                  c.write("HTTP/1.1 200 OK\r\nContent-Le");
                  rig.vertx().setTimer(20, id -> c.close());
                }));
  }

  static int pong(LoopbackServers s) {
    return s.raw(
        c -> c.handler(b -> c.write(b.toString().startsWith("PING") ? "+PONG\r\n" : "-ERR\r\n")));
  }
}
