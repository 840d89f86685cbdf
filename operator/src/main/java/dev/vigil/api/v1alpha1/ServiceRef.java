package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/** The Service under which Vigil publishes the pool. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ServiceRef {

  @JsonPropertyDescription(
      "Name of the selector-less Service whose EndpointSlices Vigil writes. Defaults to the pool's name.")
  @Pattern(ApiFormats.SERVICE_NAME)
  @Size(max = 63)
  private String name;

  @JsonPropertyDescription(
      "Create and own that Service when it is absent. When false, the Service must exist and have no selector.")
  @Default("true")
  private Boolean manage = true;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public Boolean getManage() {
    return manage;
  }

  public void setManage(Boolean manage) {
    this.manage = manage;
  }
}
