package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;

/** One response header an HTTP probe requires ({@code active.http.headerMatch[]}). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HttpHeaderMatch extends HeaderField {

  public HttpHeaderMatch() {}

  public HttpHeaderMatch(String name, String value) {
    super(name, value);
  }

  @Override
  @JsonPropertyDescription(
      "Response header that must be present; names compare without regard to case.")
  public String getName() {
    return super.getName();
  }

  @Override
  @JsonPropertyDescription(
      "Optional regular expression (RE2 syntax, matched in linear time: no backreferences or lookaround) that must be found in the header's value (anchor it with ^ and $ for a whole-value match); with several headers of this name one matching value is enough. Absent: presence is enough. Vigil rejects the policy (Accepted=False, reason InvalidPolicy) when RE2 cannot compile it.")
  @Size(max = 1024)
  public String getValue() {
    return super.getValue();
  }
}
