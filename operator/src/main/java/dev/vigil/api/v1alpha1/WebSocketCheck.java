package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/** The WebSocket check: an HTTP/1.1 upgrade that must be answered 101 with the right accept key. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class WebSocketCheck {

  @JsonPropertyDescription(
      "Path of the upgrade request, starting with '/', optionally with a query string. The probe passes when the answer is 101 Switching Protocols with Upgrade: websocket and the Sec-WebSocket-Accept that RFC 6455 derives from the probe's key; http.host and http.headers are sent with it, and tls makes it wss.")
  @Default("/")
  @Pattern("^/[^\\s]*$")
  @Size(max = 2048)
  private String path = "/";

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }
}
