package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProberRig;
import dev.vigil.probe.Reason;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HTTP check's request body, response-header matches and fail-fast statuses against real,
 * misbehaving servers on 127.0.0.1; every case asserts the verdict, the reason and the detail.
 */
class HttpCheckFeaturesTest {
  private static final Duration DEADLINE = Duration.ofSeconds(3);

  @AutoClose static ProberRig<HttpProber> rig;

  @BeforeAll
  static void start() {
    rig = ProberRig.start(HttpProber::new);
  }

  static ProbeResult probe(int port, CheckSpec.Http http) {
    CheckSpec spec =
        CheckSpec.builder().protocol(ProbeProtocol.HTTP).timeout(DEADLINE).http(http).build();
    return rig.probe(port, spec);
  }

  static CheckSpec.Http http(
      String method, String body, List<CheckSpec.HeaderMatch> match, String failFast) {
    return new CheckSpec.Http(
        method,
        "/healthz",
        null,
        Map.of(),
        ExpectedStatuses.DEFAULT,
        null,
        body,
        match,
        failFast == null ? null : ExpectedStatuses.parse("active.http.failFastStatuses", failFast));
  }

  static CheckSpec.Http headers(CheckSpec.HeaderMatch... match) {
    return http("GET", null, List.of(match), null);
  }

  static int replying(String head) {
    return rig.servers().replying(head + "\r\nContent-Length: 2\r\n\r\nok");
  }

  // ---- fail-fast statuses -----------------------------------------------------------------------

  @Test
  void aFailFastStatusFailsWithItsOwnReason() {
    ProbeResult r =
        probe(replying("HTTP/1.1 503 Service Unavailable"), http("GET", null, null, "500-599,429"));
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).isEqualTo(Reason.FAIL_FAST_STATUS);
    assertThat(r.failFast()).isTrue();
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.detail()).isEqualTo("status 503 (fail-fast)");
  }

  @Test
  void aStatusOutsideBothSetsIsAnOrdinaryFailure() {
    ProbeResult r = probe(replying("HTTP/1.1 404 Not Found"), http("GET", null, null, "500-599"));
    assertThat(r.reason()).isEqualTo(Reason.STATUS);
    assertThat(r.failFast()).isFalse();
    assertThat(r.detail()).isEqualTo("status 404");
  }

  // ---- headerMatch ------------------------------------------------------------------------------

  @Test
  void aHeaderWithTheRightValuePassesWhateverTheCaseOfItsName() {
    ProbeResult r =
        probe(
            replying("HTTP/1.1 200 OK\r\nx-READY: yes"),
            headers(CheckSpec.HeaderMatch.of(0, "X-Ready", "^yes$")));
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(r.reason()).isEqualTo(Reason.OK);
  }

  @Test
  void aHeaderPresentWithTheWrongValueFails() {
    ProbeResult r =
        probe(
            replying("HTTP/1.1 200 OK\r\nX-Ready: no"),
            headers(CheckSpec.HeaderMatch.of(0, "X-Ready", "^yes$")));
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).isEqualTo(Reason.HEADER_MISMATCH);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.detail()).isEqualTo("header X-Ready: \"no\" does not match ^yes$");
  }

  @Test
  void aMissingHeaderFails() {
    ProbeResult r =
        probe(
            replying("HTTP/1.1 200 OK\r\nX-Other: yes"),
            headers(CheckSpec.HeaderMatch.of(0, "X-Ready", null)));
    assertThat(r.reason()).isEqualTo(Reason.HEADER_MISMATCH);
    assertThat(r.detail()).isEqualTo("header X-Ready missing");
  }

  @Test
  void oneMatchingValueAmongRepeatedHeadersIsEnough() {
    ProbeResult r =
        probe(
            replying("HTTP/1.1 200 OK\r\nX-Role: replica\r\nX-Role: primary"),
            headers(CheckSpec.HeaderMatch.of(0, "x-role", "primary")));
    assertThat(r.passed()).as(r.toString()).isTrue();
  }

  @Test
  void theStatusDecidesBeforeTheHeaders() {
    ProbeResult r =
        probe(
            replying("HTTP/1.1 503 Unavailable\r\nX-Ready: yes"),
            headers(CheckSpec.HeaderMatch.of(0, "X-Ready", "yes")));
    assertThat(r.reason()).isEqualTo(Reason.STATUS);
    assertThat(r.detail()).isEqualTo("status 503");
  }

  @Test
  void headersOfAnInterimResponseDoNotCount() {
    int port =
        rig.servers()
            .replying(
                "HTTP/1.1 100 Continue\r\nX-Ready: yes\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    ProbeResult r = probe(port, headers(CheckSpec.HeaderMatch.of(0, "X-Ready", null)));
    assertThat(r.reason()).isEqualTo(Reason.HEADER_MISMATCH);
  }

  @Test
  void aHeaderThatNeverArrivesEndsAtTheOneDeadline() {
    int port = rig.servers().raw(c -> c.handler(b -> c.write("HTTP/1.1 200 OK\r\nX-Ready: y")));
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.HTTP)
            .timeout(Duration.ofMillis(300))
            .http(headers(CheckSpec.HeaderMatch.of(0, "X-Ready", null)))
            .build();
    ProbeResult r = rig.probe(port, spec);
    assertThat(r.reason()).isEqualTo(Reason.TIMEOUT);
  }

  // ---- request body -----------------------------------------------------------------------------

  /**
   * A server that reads the request head and its Content-Length body, records both, and answers
   * with the body it received (or, when {@code ignoreBody}, with a fixed text as soon as the head
   * is in, never reading the body).
   */
  static int echo(boolean ignoreBody, CompletableFuture<String> request) {
    return rig.servers()
        .raw(
            c -> {
              Buffer in = Buffer.buffer();
              c.handler(
                  data -> {
                    in.appendBuffer(data);
                    String text = in.toString(StandardCharsets.UTF_8);
                    int end = text.indexOf("\r\n\r\n");
                    if (end < 0) {
                      return;
                    }
                    String reply;
                    if (ignoreBody) {
                      reply = "pong";
                    } else {
                      int length = 0;
                      for (String line : text.substring(0, end).split("\r\n")) {
                        if (line.toLowerCase().startsWith("content-length:")) {
                          length = Integer.parseInt(line.substring(15).trim());
                        }
                      }
                      byte[] bytes = in.getBytes();
                      int head = text.substring(0, end + 4).getBytes(StandardCharsets.UTF_8).length;
                      if (bytes.length - head < length) {
                        return;
                      }
                      reply = new String(bytes, head, length, StandardCharsets.UTF_8);
                    }
                    c.handler(null);
                    request.complete(text);
                    byte[] out = reply.getBytes(StandardCharsets.UTF_8);
                    c.write("HTTP/1.1 200 OK\r\nContent-Length: " + out.length + "\r\n\r\n" + reply)
                        .onComplete(ar -> c.close());
                  });
            });
  }

  static CheckSpec.Http post(String body, String bodyMatch) {
    CheckSpec.Http h = http("POST", body, null, null);
    return new CheckSpec.Http(
        h.method(),
        h.path(),
        h.host(),
        Map.of("Content-Type", "application/json"),
        h.expectedStatuses(),
        CheckSpec.Http.compileBodyMatch(bodyMatch),
        h.body(),
        h.headerMatch(),
        h.failFastStatuses());
  }

  @Test
  void theBodyIsSentWithItsLengthAndAnEchoMatches() throws Exception {
    CompletableFuture<String> request = new CompletableFuture<>();
    String body = "{\"ping\":\"grüß\"}";
    ProbeResult r = probe(echo(false, request), post(body, "\"ping\":\"grüß\""));
    assertThat(r.passed()).as(r.toString()).isTrue();
    String seen = request.get(5, TimeUnit.SECONDS);
    assertThat(seen).startsWith("POST /healthz HTTP/1.1\r\n");
    assertThat(seen)
        .contains("Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n");
    assertThat(seen).endsWith("\r\n\r\n" + body);
  }

  @Test
  void aServerThatIgnoresTheRequestBodyFailsTheBodyMatch() {
    ProbeResult r = probe(echo(true, new CompletableFuture<>()), post("{\"ping\":1}", "ping"));
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).isEqualTo(Reason.BODY_MISMATCH);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.detail()).isEqualTo("body does not match");
  }

  @Test
  void aServerThatNeverReadsTheBodyOfAPostTimesOutAtTheOneDeadline() {
    int port = rig.servers().raw(c -> {}); // accepts, reads nothing, answers nothing
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.HTTP)
            .timeout(Duration.ofMillis(300))
            .http(post("x".repeat(4096), null))
            .build();
    assertThat(rig.probe(port, spec).reason()).isEqualTo(Reason.TIMEOUT);
  }
}
