package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;

/** One HTTP header sent with a probe. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HttpHeader extends HeaderField {

  public HttpHeader() {}

  public HttpHeader(String name, String value) {
    super(name, value);
  }

  @Override
  @JsonPropertyDescription("Header name.")
  public String getName() {
    return super.getName();
  }

  @Override
  @JsonPropertyDescription("Header value.")
  @Size(max = 4096)
  public String getValue() {
    return super.getValue();
  }
}
