package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.List;

/** The request of an HTTP or HTTPS probe and the statuses that pass. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "!has(self.body) || !(self.method in ['GET', 'HEAD'])",
    message = "body needs a method that carries one, such as POST or PUT (not GET or HEAD)",
    fieldPath = ".body")
@ValidationRule(
    value =
        "!has(self.failFastStatuses) || !has(self.expectedStatuses) || self.failFastStatuses.all(f, self.expectedStatuses.all(e, (size(f) == 3 ? f : f.substring(4, 7)) < e.substring(0, 3) || (size(e) == 3 ? e : e.substring(4, 7)) < f.substring(0, 3)))",
    message = "failFastStatuses must not share a status with expectedStatuses",
    fieldPath = ".failFastStatuses")
public class HttpCheck {

  @JsonPropertyDescription("Request method.")
  @Default("GET")
  @Pattern("^[A-Z]+$")
  @Size(max = 16)
  private String method = "GET";

  @JsonPropertyDescription("Request path, starting with '/', optionally with a query string.")
  @Default("/healthz")
  @Pattern("^/[^\\s]*$")
  @Size(max = 2048)
  private String path = "/healthz";

  @JsonPropertyDescription(
      "Host header (and, for HTTPS without tls.serverName, the SNI name). Defaults to the Pod IP.")
  @Size(max = 253)
  private String host;

  @JsonPropertyDescription("Extra request headers.")
  @Size(max = 32)
  private List<HttpHeader> headers;

  @JsonPropertyDescription(
      "Statuses that pass, as codes (\"200\") or inclusive ranges (\"200-399\"), each between 100 and 599. Any other status fails, and so does a malformed status line.")
  @Default("[\"200-399\"]")
  @Size(min = 1, max = 32)
  @ValidationRule(
      value = ApiFormats.STATUS_RANGES_ORDERED_RULE,
      message = "a status range must be low-high with low <= high, e.g. 200-399")
  private List<
          @Pattern(ApiFormats.STATUS_RANGE) @Size(max = ApiFormats.STATUS_RANGE_MAX_LENGTH) String>
      expectedStatuses = new ArrayList<>(List.of("200-399"));

  @JsonPropertyDescription(
      "Optional regular expression (RE2 syntax, matched in linear time: no backreferences or lookaround) that the first 64 KiB of the response body must match for the probe to pass. Vigil rejects the policy (Accepted=False, reason InvalidPolicy) when RE2 cannot compile it.")
  @Size(max = 1024)
  private String bodyMatch;

  @JsonPropertyDescription(
      "HTTP version of the probe: \"1.1\", or \"2\" (h2c with prior knowledge in clear, ALPN h2 with TLS; a server that does not speak HTTP/2 fails). With 2 the status comes from the :status pseudo-header, the connection is kept between probes, and a stream the server resets fails the probe.")
  @Default("\"1.1\"")
  @Pattern("^(1\\.1|2)$")
  private String version = "1.1";

  @JsonPropertyDescription(
      "Request body sent with the probe (UTF-8, at most 4 KiB), with its Content-Length; needs a method such as POST or PUT.")
  @Size(max = 4096)
  private String body;

  @JsonPropertyDescription(
      "Response headers that must be present, each a name (any case) with an optional value regular expression (RE2 syntax). Checked only when the status passes: the status decides first, then headers, then bodyMatch.")
  @Size(max = 16)
  @ValidationRule(
      value = "self.all(a, self.exists_one(b, b.name.lowerAscii() == a.name.lowerAscii()))",
      message = "header names must be unique (without regard to case)")
  private List<HttpHeaderMatch> headerMatch;

  @JsonPropertyDescription(
      "Statuses that take an Up backend Down at once, whatever fall (as Envoy does for a non-expected status), as codes or inclusive ranges like expectedStatuses; disjoint from expectedStatuses. A Down backend still needs rise passes. Default: none.")
  @Size(max = 32)
  @ValidationRule(
      value = ApiFormats.STATUS_RANGES_ORDERED_RULE,
      message = "a status range must be low-high with low <= high, e.g. 500-599")
  private List<
          @Pattern(ApiFormats.STATUS_RANGE) @Size(max = ApiFormats.STATUS_RANGE_MAX_LENGTH) String>
      failFastStatuses;

  public String getMethod() {
    return method;
  }

  public void setMethod(String method) {
    this.method = method;
  }

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }

  public String getHost() {
    return host;
  }

  public void setHost(String host) {
    this.host = host;
  }

  public List<HttpHeader> getHeaders() {
    return headers;
  }

  public void setHeaders(List<HttpHeader> headers) {
    this.headers = headers;
  }

  public List<
          @Pattern(ApiFormats.STATUS_RANGE) @Size(max = ApiFormats.STATUS_RANGE_MAX_LENGTH) String>
      getExpectedStatuses() {
    return expectedStatuses;
  }

  public void setExpectedStatuses(
      List<@Pattern(ApiFormats.STATUS_RANGE) @Size(max = ApiFormats.STATUS_RANGE_MAX_LENGTH) String>
          expectedStatuses) {
    this.expectedStatuses = expectedStatuses;
  }

  public String getBodyMatch() {
    return bodyMatch;
  }

  public void setBodyMatch(String bodyMatch) {
    this.bodyMatch = bodyMatch;
  }

  public String getVersion() {
    return version;
  }

  public void setVersion(String version) {
    this.version = version;
  }

  public String getBody() {
    return body;
  }

  public void setBody(String body) {
    this.body = body;
  }

  public List<HttpHeaderMatch> getHeaderMatch() {
    return headerMatch;
  }

  public void setHeaderMatch(List<HttpHeaderMatch> headerMatch) {
    this.headerMatch = headerMatch;
  }

  public List<
          @Pattern(ApiFormats.STATUS_RANGE) @Size(max = ApiFormats.STATUS_RANGE_MAX_LENGTH) String>
      getFailFastStatuses() {
    return failFastStatuses;
  }

  public void setFailFastStatuses(
      List<@Pattern(ApiFormats.STATUS_RANGE) @Size(max = ApiFormats.STATUS_RANGE_MAX_LENGTH) String>
          failFastStatuses) {
    this.failFastStatuses = failFastStatuses;
  }
}
