package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/** The client certificate a probe presents to a backend that asks for one (mTLS). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TlsClientCertificate {

  @JsonPropertyDescription(
      "A kubernetes.io/tls-shaped Secret: tls.crt (PEM certificate chain) and tls.key (PEM private key). Rotating it needs no restart.")
  @Required
  private SecretRef secretRef;

  public TlsClientCertificate() {}

  public TlsClientCertificate(SecretRef secretRef) {
    this.secretRef = secretRef;
  }

  public SecretRef getSecretRef() {
    return secretRef;
  }

  public void setSecretRef(SecretRef secretRef) {
    this.secretRef = secretRef;
  }
}
