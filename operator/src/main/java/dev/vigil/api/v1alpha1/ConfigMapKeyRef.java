package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A key of a ConfigMap in the policy's namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ConfigMapKeyRef {

  @JsonPropertyDescription(
      "Name of the ConfigMap, in the policy's namespace. Vigil reads only ConfigMaps labelled vigil.dev/probe-tls=true.")
  @Required
  @Pattern(ApiFormats.OBJECT_NAME)
  @Size(max = 253)
  private String name;

  @JsonPropertyDescription("The key holding the PEM certificates.")
  @Default("ca.crt")
  @Size(max = 253)
  private String key = "ca.crt";

  public ConfigMapKeyRef() {}

  public ConfigMapKeyRef(String name, String key) {
    this.name = name;
    this.key = key == null ? "ca.crt" : key;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }
}
