package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;

/** TLS settings of HTTPS, gRPC-over-TLS and wss probes (docs/checks.md, "TLS"). */
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

  @JsonPropertyDescription(
      "CA certificates to verify the backend with, from a ConfigMap key; only these are trusted (not the JVM's public CAs). Reloaded when the ConfigMap changes.")
  private TlsCaBundle caBundle;

  @JsonPropertyDescription(
      "A client certificate and key for backends that require one (mTLS), from a Secret. Reloaded when the Secret changes.")
  private TlsClientCertificate clientCertificate;

  public TlsCaBundle getCaBundle() {
    return caBundle;
  }

  public void setCaBundle(TlsCaBundle caBundle) {
    this.caBundle = caBundle;
  }

  public TlsClientCertificate getClientCertificate() {
    return clientCertificate;
  }

  public void setClientCertificate(TlsClientCertificate clientCertificate) {
    this.clientCertificate = clientCertificate;
  }

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
