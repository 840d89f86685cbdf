package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What Vigil decided about a pool and its backends. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BackendPoolStatus {

  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription("Name of the HealthPolicy in use.")
  private String policy;

  @JsonPropertyDescription("Backends in the pool (Pods with an IP that the selector matches).")
  private Integer total;

  @JsonPropertyDescription("Backends that are Up and not ejected (and not draining).")
  private Integer available;

  @JsonPropertyDescription("Backends that active checks found Down.")
  private Integer down;

  @JsonPropertyDescription("Backends that passive checks ejected.")
  private Integer ejected;

  @JsonPropertyDescription(
      "True when too few backends are available and every decided backend is published as ready.")
  private Boolean panic;

  @JsonPropertyDescription("available/total, e.g. 27/30, for kubectl get.")
  private String availability;

  @JsonPropertyDescription(
      "The replica (shard) that probes this pool and writes its status, when Vigil runs sharded.")
  private String shard;

  @JsonPropertyDescription(
      "Detection time: the worst case from a kill to Down the pool gets now (effective, under the probe budget) and what its policy asks for (wanted).")
  private DetectionStatus detection;

  @JsonPropertyDescription(
      "Conditions: Ready (the verdict is published), Panic and Degraded, each with a reason; Probing (a replica owns and probes the pool) when Vigil runs sharded; ProbeBudgetExceeded when even backends in transition have their probes stretched.")
  private List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription(
      "Per-backend state, unavailable backends first, capped at a few hundred entries so the object stays small on very large pools.")
  private List<BackendStatus> backends = new ArrayList<>();

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public DetectionStatus getDetection() {
    return detection;
  }

  public void setDetection(DetectionStatus detection) {
    this.detection = detection;
  }

  public String getShard() {
    return shard;
  }

  public void setShard(String shard) {
    this.shard = shard;
  }

  public String getPolicy() {
    return policy;
  }

  public void setPolicy(String policy) {
    this.policy = policy;
  }

  public Integer getTotal() {
    return total;
  }

  public void setTotal(Integer total) {
    this.total = total;
  }

  public Integer getAvailable() {
    return available;
  }

  public void setAvailable(Integer available) {
    this.available = available;
  }

  public Integer getDown() {
    return down;
  }

  public void setDown(Integer down) {
    this.down = down;
  }

  public Integer getEjected() {
    return ejected;
  }

  public void setEjected(Integer ejected) {
    this.ejected = ejected;
  }

  public Boolean getPanic() {
    return panic;
  }

  public void setPanic(Boolean panic) {
    this.panic = panic;
  }

  public String getAvailability() {
    return availability;
  }

  public void setAvailability(String availability) {
    this.availability = availability;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }

  public List<BackendStatus> getBackends() {
    return backends;
  }

  public void setBackends(List<BackendStatus> backends) {
    this.backends = backends;
  }
}
