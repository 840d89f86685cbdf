package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;

/** A gRPC health probe (grpc.health.v1.Health/Check). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class GrpcCheck {

  @JsonPropertyDescription(
      "Service name sent in the health check request; empty checks the whole server. SERVING passes, anything else fails.")
  @Default("\"\"")
  @Size(max = 256)
  private String service = "";

  public String getService() {
    return service;
  }

  public void setService(String service) {
    this.service = service;
  }
}
