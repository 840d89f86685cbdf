package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/** Where the probe's trusted CA certificates come from. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TlsCaBundle {

  @JsonPropertyDescription(
      "A ConfigMap key holding one or more PEM CA certificates (key default ca.crt). With a bundle, a server certificate must chain to one of them: the JVM's public CAs are not trusted.")
  @Required
  private ConfigMapKeyRef configMapRef;

  public TlsCaBundle() {}

  public TlsCaBundle(ConfigMapKeyRef configMapRef) {
    this.configMapRef = configMapRef;
  }

  public ConfigMapKeyRef getConfigMapRef() {
    return configMapRef;
  }

  public void setConfigMapRef(ConfigMapKeyRef configMapRef) {
    this.configMapRef = configMapRef;
  }
}
