package dev.vigil.api.v1alpha1;

import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * An HTTP header name with a value: one validation of the name (an RFC 9110 token) for every list
 * of headers in the API. Each subclass says what its value means and how long it may be, on its
 * getter overrides, where the CRD generator reads descriptions and bounds.
 */
public abstract class HeaderField {

  @Required
  @Pattern("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
  @Size(max = 256)
  private String name;

  private String value;

  protected HeaderField() {}

  protected HeaderField(String name, String value) {
    this.name = name;
    this.value = value;
  }

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
}
