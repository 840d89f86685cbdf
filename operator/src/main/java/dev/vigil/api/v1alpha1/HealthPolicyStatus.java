package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What Vigil observed about a HealthPolicy: whether it is valid, and the pools that use it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HealthPolicyStatus {

  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription(
      "Conditions; Accepted tells whether the policy is valid, and its message names the first bad field.")
  private List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("Number of BackendPools that use this policy.")
  private Integer pools;

  @JsonPropertyDescription("Backends in all pools that use this policy.")
  private Integer backends;

  @JsonPropertyDescription(
      "Available backends (Up and not ejected) in all pools that use this policy.")
  private Integer available;

  @JsonPropertyDescription("Number of pools using this policy that are in panic.")
  private Integer panicking;

  @JsonPropertyDescription("available/backends, e.g. 27/30, for kubectl get.")
  private String availability;

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }

  public Integer getPools() {
    return pools;
  }

  public void setPools(Integer pools) {
    this.pools = pools;
  }

  public Integer getBackends() {
    return backends;
  }

  public void setBackends(Integer backends) {
    this.backends = backends;
  }

  public Integer getAvailable() {
    return available;
  }

  public void setAvailable(Integer available) {
    this.available = available;
  }

  public Integer getPanicking() {
    return panicking;
  }

  public void setPanicking(Integer panicking) {
    this.panicking = panicking;
  }

  public String getAvailability() {
    return availability;
  }

  public void setAvailability(String availability) {
    this.availability = availability;
  }
}
