package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProbeModelTest {

  @Test
  void defaultsFollowTheDesign() {
    CheckSpec spec = CheckSpec.builder().build();
    assertThat(spec.protocol()).isEqualTo(ProbeProtocol.HTTP);
    assertThat(spec.timeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(spec.http().method()).isEqualTo("GET");
    assertThat(spec.http().path()).isEqualTo("/healthz");
    assertThat(spec.http().host()).isNull();
    assertThat(spec.http().expectedStatuses()).isEqualTo(ExpectedStatuses.DEFAULT);
    assertThat(spec.http().bodyMatch()).isNull();
    assertThat(spec.grpc().service()).isEmpty();
    assertThat(spec.tls().insecureSkipVerify()).isFalse();
    assertThat(spec.reuseConnection()).isFalse();
    assertThat(spec.portFor(new ProbeTarget("10.0.0.1", 8080))).isEqualTo(8080);
  }

  @Test
  void expectedStatusesParseCodesAndRanges() {
    ExpectedStatuses s =
        ExpectedStatuses.parse("active.http.expectedStatuses", List.of("200-299", "404"));
    assertThat(s.contains(200)).isTrue();
    assertThat(s.contains(299)).isTrue();
    assertThat(s.contains(300)).isFalse();
    assertThat(s.contains(404)).isTrue();
    assertThat(s).hasToString("[200-299, 404]");
    assertThat(ExpectedStatuses.DEFAULT.contains(399)).isTrue();
    assertThat(ExpectedStatuses.DEFAULT.contains(400)).isFalse();
  }

  @Test
  void expectedStatusErrorsNameTheField() {
    String field = "active.http.expectedStatuses";
    assertThatThrownBy(() -> ExpectedStatuses.parse(field, List.of("200", "600")))
        .hasMessageStartingWith("active.http.expectedStatuses[1]:")
        .hasMessageContaining("outside 100..599");
    assertThatThrownBy(() -> ExpectedStatuses.parse(field, List.of("399-200")))
        .hasMessageStartingWith("active.http.expectedStatuses[0]:");
    assertThatThrownBy(() -> ExpectedStatuses.parse(field, List.of("2xx")))
        .hasMessageContaining("not a status code");
    assertThatThrownBy(() -> ExpectedStatuses.parse(field, List.of("2000")))
        .hasMessageContaining("not a status code");
  }

  @Test
  void invalidSettingsNameTheField() {
    assertThatThrownBy(() -> CheckSpec.builder().bodyMatch("(unclosed").build())
        .hasMessageStartingWith("active.http.bodyMatch:");
    assertThatThrownBy(() -> CheckSpec.builder().timeout(Duration.ZERO).build())
        .hasMessageStartingWith("active.timeout:");
    assertThatThrownBy(
            () ->
                new CheckSpec.Http(
                    "GET", "/x", null, Map.of("X-Bad", "a\r\nInjected: 1"), null, null))
        .hasMessageStartingWith("active.http.headers.X-Bad:");
    assertThatThrownBy(() -> new CheckSpec.Http("GET", "healthz", null, null, null, null))
        .hasMessageStartingWith("active.http.path:");
    assertThatThrownBy(() -> new CheckSpec.Http("G T", "/", null, null, null, null))
        .hasMessageStartingWith("active.http.method:");
  }

  @Test
  void statusLineClassifierReadsTheCodeFieldOnly() {
    StatusLineClassifier c = new StatusLineClassifier(ExpectedStatuses.DEFAULT);
    assertThat(c.classify("HTTP/1.1 503 Backend 200 ms slow").reason()).isEqualTo(Reason.STATUS);
    assertThat(c.classify("HTTP/1.1 503 Backend 200 ms slow").detail()).isEqualTo("status 503");
    assertThat(c.classify("HTTP/1.1 200").passed()).isTrue();
    assertThat(c.classify("HTTP/1.1 200\r").passed()).isTrue();
    assertThat(c.classify("HTTP/1.0 200 OK").passed()).isTrue();
    assertThat(c.classify("HTTP/1.1 404 Not Found").reason()).isEqualTo(Reason.STATUS);
    assertThat(c.classify("HTTP/1.1 2000 OK").reason()).isEqualTo(Reason.MALFORMED_RESPONSE);
    assertThat(c.classify("HTTP/1.1 099 X").reason()).isEqualTo(Reason.MALFORMED_RESPONSE);
    assertThat(c.classify("").reason()).isEqualTo(Reason.MALFORMED_RESPONSE);
    assertThat(c.classify("<html>").reason()).isEqualTo(Reason.MALFORMED_RESPONSE);
    assertThat(c.classify("HTTP/1.1 600 X").reason()).isEqualTo(Reason.STATUS);
  }

  @Test
  void parserKeepsAtMost64KiBOfBody() {
    HttpResponseParser p = new HttpResponseParser(false, true);
    byte[] head = "HTTP/1.1 200 OK\r\n\r\n".getBytes();
    p.feed(head, 0, head.length);
    byte[] chunk = new byte[10_000];
    for (int i = 0; i < 100; i++) {
      p.feed(chunk, 0, chunk.length);
    }
    assertThat(p.bodyLimitReached()).isTrue();
    assertThat(p.bodyTruncated()).isTrue();
    assertThat(p.bodyText().length()).isEqualTo(HttpResponseParser.BODY_LIMIT);
    assertThat(p.complete()).isFalse();
    p.endOfInput();
    assertThat(p.complete()).isTrue();
    assertThat(p.reusable()).isFalse();
  }

  @Test
  void parserKnowsWhenAConnectionCanBeReused() {
    assertThat(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").reusable()).isTrue();
    assertThat(
            parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
                .reusable())
        .isTrue();
    assertThat(
            parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").reusable())
        .isFalse();
    assertThat(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable()).isFalse();
    assertThat(
            parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
                .isMalformed())
        .isTrue();
  }

  private static HttpResponseParser parse(String response) {
    HttpResponseParser p = new HttpResponseParser(false, false);
    byte[] b = response.getBytes();
    p.feed(b, 0, b.length);
    return p;
  }
}
