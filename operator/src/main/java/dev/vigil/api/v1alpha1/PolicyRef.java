package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A reference to a HealthPolicy in the same namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PolicyRef {

  @JsonPropertyDescription("Name of the HealthPolicy.")
  @Required
  @Pattern(ApiFormats.OBJECT_NAME)
  @Size(max = 253)
  private String name;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public PolicyRef() {}

  public PolicyRef(String name) {
    this.name = name;
  }
}
