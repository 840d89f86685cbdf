package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A Secret in the policy's namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SecretRef {

  @JsonPropertyDescription(
      "Name of the Secret, in the policy's namespace. Vigil reads only Secrets labelled vigil.dev/probe-tls=true, and none when its admin turned Secret reading off.")
  @Required
  @Pattern(ApiFormats.OBJECT_NAME)
  @Size(max = 253)
  private String name;

  public SecretRef() {}

  public SecretRef(String name) {
    this.name = name;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }
}
