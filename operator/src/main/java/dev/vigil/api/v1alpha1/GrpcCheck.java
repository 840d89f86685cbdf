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

  @JsonPropertyDescription(
      "Also keep a grpc.health.v1.Health/Watch stream open to each backend: every status the server streams counts at once as a probe result in the same rise/fall streaks (a NOT_SERVING takes effect without waiting for the interval). The interval's Check keeps running as the stream's liveness; the stream is re-opened with backoff (1s doubling to 30s) when it ends, one per backend; a server without Watch is left to Check.")
  @Default("false")
  private Boolean watch = false;

  public Boolean getWatch() {
    return watch;
  }

  public void setWatch(Boolean watch) {
    this.watch = watch;
  }

  public String getService() {
    return service;
  }

  public void setService(String service) {
    this.service = service;
  }
}
