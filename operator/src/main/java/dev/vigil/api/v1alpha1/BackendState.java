package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The published state of one backend. */
public enum BackendState {
  /** Not decided yet: the first probe decides. */
  @JsonProperty("Unknown")
  UNKNOWN,
  /** Passing active checks. */
  @JsonProperty("Up")
  UP,
  /** Failing active checks. */
  @JsonProperty("Down")
  DOWN,
  /** Ejected by a passive rule until ejectedUntil. */
  @JsonProperty("Ejected")
  EJECTED,
  /** Held back by flap damping until dampedUntil (docs/design.md §2.1). */
  @JsonProperty("Damped")
  DAMPED,
  /**
   * Terminating, not Ready per the kubelet when respectPodReadiness is set, or drained by an admin
   * state or the backend's agent.
   */
  @JsonProperty("Draining")
  DRAINING,
  /** In maintenance (admin state or agent): left out of the EndpointSlice. */
  @JsonProperty("Maint")
  MAINT
}
