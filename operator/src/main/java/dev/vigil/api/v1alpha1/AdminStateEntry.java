package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * An operator's admin state for one backend of the pool (docs/decision.md, "Admin state and the
 * agent"), as the Pod annotation {@code vigil.dev/admin-state} says it on the Pod itself.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AdminStateEntry {
  /** The words of an admin state, as written in the spec. */
  public enum State {
    @JsonProperty("drain")
    DRAIN,
    @JsonProperty("maint")
    MAINT,
    @JsonProperty("up")
    UP,
    @JsonProperty("ready")
    READY
  }

  @JsonPropertyDescription(
      "Name of the Pod (a backend of this pool); in a pool of targets, a target's address, its hostname (all its addresses) or hostname/address.")
  @Required
  @Pattern("^[a-zA-Z0-9:]([-a-zA-Z0-9.:/]*[a-zA-Z0-9.:])?$")
  @Size(max = 300)
  private String pod;

  @JsonPropertyDescription(
      "drain: published ready=false, serving=<health>, terminating=true, like a terminating Pod; maint: left out of the EndpointSlice; up or ready: no hold. Neither drain nor maint counts toward panic or the ejection cap. With the Pod annotation vigil.dev/admin-state also set, the stricter applies (maint > drain > up).")
  @Required
  private State state;

  public AdminStateEntry() {}

  public AdminStateEntry(String pod, State state) {
    this.pod = pod;
    this.state = state;
  }

  public String getPod() {
    return pod;
  }

  public void setPod(String pod) {
    this.pod = pod;
  }

  public State getState() {
    return state;
  }

  public void setState(State state) {
    this.state = state;
  }
}
