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
      value = "self.all(s, size(s) == 3 || s.substring(0, 3) <= s.substring(4, 7))",
      message = "a status range must be low-high with low <= high, e.g. 200-399")
  private List<@Pattern("^[1-5][0-9]{2}(-[1-5][0-9]{2})?$") @Size(max = 7) String>
      expectedStatuses = new ArrayList<>(List.of("200-399"));

  @JsonPropertyDescription(
      "Optional regular expression (Java syntax) that the first 64 KiB of the response body must match for the probe to pass. Vigil rejects the policy (Accepted=False) when it does not compile.")
  @Size(max = 1024)
  private String bodyMatch;

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

  public List<@Pattern("^[1-5][0-9]{2}(-[1-5][0-9]{2})?$") @Size(max = 7) String>
      getExpectedStatuses() {
    return expectedStatuses;
  }

  public void setExpectedStatuses(
      List<@Pattern("^[1-5][0-9]{2}(-[1-5][0-9]{2})?$") @Size(max = 7) String> expectedStatuses) {
    this.expectedStatuses = expectedStatuses;
  }

  public String getBodyMatch() {
    return bodyMatch;
  }

  public void setBodyMatch(String bodyMatch) {
    this.bodyMatch = bodyMatch;
  }
}
