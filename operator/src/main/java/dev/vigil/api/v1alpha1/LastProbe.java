package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The result of the latest active probe of a backend. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class LastProbe {

  @JsonPropertyDescription("When the probe started (RFC 3339).")
  private String at;

  @JsonPropertyDescription("Whether it passed.")
  private Boolean ok;

  @JsonPropertyDescription("How long it took, in milliseconds.")
  private Long latencyMs;

  @JsonPropertyDescription("Short detail, e.g. ok, timeout, connection refused, status 503.")
  private String detail;

  public String getAt() {
    return at;
  }

  public void setAt(String at) {
    this.at = at;
  }

  public Boolean getOk() {
    return ok;
  }

  public void setOk(Boolean ok) {
    this.ok = ok;
  }

  public Long getLatencyMs() {
    return latencyMs;
  }

  public void setLatencyMs(Long latencyMs) {
    this.latencyMs = latencyMs;
  }

  public String getDetail() {
    return detail;
  }

  public void setDetail(String detail) {
    this.detail = detail;
  }
}
