package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;

/** A TCP probe: connect, optionally send a payload and expect a reply prefix. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TcpCheck {

  @JsonPropertyDescription("Optional payload sent after connecting (UTF-8).")
  @Size(max = 4096)
  private String send;

  @JsonPropertyDescription(
      "Optional prefix the reply must start with for the probe to pass (UTF-8).")
  @Size(max = 4096)
  private String expect;

  public String getSend() {
    return send;
  }

  public void setSend(String send) {
    this.send = send;
  }

  public String getExpect() {
    return expect;
  }

  public void setExpect(String expect) {
    this.expect = expect;
  }
}
