package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;

/** TLS settings of HTTPS and gRPC-over-TLS probes. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TlsConfig {

  @JsonPropertyDescription(
      "Accept any server certificate. Only for backends with self-signed certificates.")
  @Default("false")
  private Boolean insecureSkipVerify = false;

  @JsonPropertyDescription(
      "Server name for SNI and certificate verification, for HTTPS and gRPC over TLS (for gRPC also the :authority). Defaults to http.host (HTTPS only), else the Pod IP, which is never sent as SNI.")
  @Size(max = 253)
  private String serverName;

  public Boolean getInsecureSkipVerify() {
    return insecureSkipVerify;
  }

  public void setInsecureSkipVerify(Boolean insecureSkipVerify) {
    this.insecureSkipVerify = insecureSkipVerify;
  }

  public String getServerName() {
    return serverName;
  }

  public void setServerName(String serverName) {
    this.serverName = serverName;
  }
}
