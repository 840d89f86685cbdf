package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** One HTTP header sent with a probe. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HttpHeader {

  @JsonPropertyDescription("Header name.")
  @Required
  @Pattern("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
  @Size(max = 256)
  private String name;

  @JsonPropertyDescription("Header value.")
  @Size(max = 4096)
  private String value;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getValue() {
    return value;
  }

  public void setValue(String value) {
    this.value = value;
  }

  public HttpHeader() {}

  public HttpHeader(String name, String value) {
    this.name = name;
    this.value = value;
  }
}
