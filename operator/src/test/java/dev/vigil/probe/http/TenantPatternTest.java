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
import dev.vigil.probe.ProberRig;
import dev.vigil.probe.Reason;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
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

  /** The rig's prober is the HTTP/1.1 one; the HTTP/2 one shares its Vert.x and context. */
  @AutoClose static ProberRig<HttpProber> rig;

  static HttpProber http1;
  static Http2Prober http2;

  @BeforeAll
  static void start() {
    rig = ProberRig.start(HttpProber::new);
    http1 = rig.prober();
    http2 = new Http2Prober(rig.vertx());
  }

  /** Before the rig closes (JUnit closes {@code @AutoClose} fields after this). */
  @AfterAll
  static void stop() {
    LoopbackServers.await(http2.close());
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
  void aCostlyBodyMatchIsRefusedAfterItsFirstMatchSoTheLoopStaysFree() throws Exception {
    // linear, but about 90 ms of CPU a match on 64 KiB: ten probes a second of a few such pools
    // would fill the event loops again (60,000 bytes: under the 64 KiB kept); after the first match
    // the pattern is not run for 30 s
    int hostile = answering("a".repeat(60_000) + "!", Map.of());
    HttpProber prober = new HttpProber(rig.vertx());
    try {
      List<ProbeResult> verdicts = new java.util.ArrayList<>();
      for (int i = 0; i < 20; i++) {
        verdicts.add(within(probe(prober, hostile, spec().bodyMatch(EXPLOSIVE))));
      }
      assertThat(verdicts).allMatch(v -> v.reason() == Reason.BODY_MISMATCH);
      assertThat(verdicts.get(0).detail()).isEqualTo("body does not match");
      assertThat(verdicts.subList(1, 20))
          .as("refused after its first match")
          .allMatch(v -> v.detail().startsWith("bodyMatch not run: it costs "));
    } finally {
      LoopbackServers.await(prober.close());
    }
  }

  @Test
  void anExplosiveHeaderValueMatchFailsQuickly() throws Exception {
    int hostile = answering("ok", Map.of("X-Ready", "a".repeat(2048) + "!"));
    CheckSpec.Http http = explosiveHeaderMatch();

    ProbeResult verdict = within(probe(http1, hostile, spec().http(http)));

    assertThat(verdict.reason()).isEqualTo(Reason.HEADER_MISMATCH);
  }

  @Test
  void aCostlyHeaderValueMatchIsRefusedAfterItsFirstMatch() throws Exception {
    int hostile = answering("ok", Map.of("X-Ready", "a".repeat(20_000) + "!"));
    CheckSpec.Http http = explosiveHeaderMatch();
    HttpProber prober = new HttpProber(rig.vertx());
    try {
      ProbeResult first = within(probe(prober, hostile, spec().http(http)));
      ProbeResult second = within(probe(prober, hostile, spec().http(http)));
      assertThat(first.detail())
          .startsWith("header X-Ready: ")
          .endsWith("does not match " + EXPLOSIVE);
      assertThat(second.reason()).isEqualTo(Reason.HEADER_MISMATCH);
      assertThat(second.detail()).startsWith("headerMatch X-Ready not run: it costs ");
    } finally {
      LoopbackServers.await(prober.close());
    }
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

  /** An HTTP check whose X-Ready header must match the explosive pattern. */
  private static CheckSpec.Http explosiveHeaderMatch() {
    return new CheckSpec.Http(
        "GET",
        "/healthz",
        null,
        Map.of(),
        ExpectedStatuses.DEFAULT,
        null,
        null,
        List.of(CheckSpec.HeaderMatch.of(0, "X-Ready", EXPLOSIVE)),
        null);
  }

  private static CheckSpecBuilder spec() {
    return CheckSpec.builder().protocol(ProbeProtocol.HTTP).timeout(Duration.ofSeconds(5));
  }

  private static Future<ProbeResult> probe(Prober prober, int port, CheckSpecBuilder spec) {
    return rig.probeLater(prober, new ProbeTarget("127.0.0.1", port), spec.build());
  }

  private static ProbeResult within(Future<ProbeResult> result) throws Exception {
    return result.toCompletionStage().toCompletableFuture().get(BOUND_SECONDS, TimeUnit.SECONDS);
  }

  /** A Vert.x server (HTTP/1.1 and h2c) answering 200 with {@code body} and {@code headers}. */
  private static int answering(String body, Map<String, String> headers) {
    return rig.servers()
        .http(
            new HttpServerOptions(),
            server ->
                server.requestHandler(
                    request -> {
                      headers.forEach(request.response()::putHeader);
                      request.response().end(body);
                    }));
  }
}
