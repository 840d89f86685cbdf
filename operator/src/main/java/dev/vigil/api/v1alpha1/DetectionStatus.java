package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The detection time a pool gets from the replica that probes it (docs/checks.md). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DetectionStatus {

  @JsonPropertyDescription(
      "Worst-case time from a backend's death to Down now, under the probe budget's stretch: the longest stretched interval of any backend, then fall - 1 stretched fastIntervals, then timeout (jitter not included). A duration such as 3.3s.")
  private String effective;

  @JsonPropertyDescription(
      "The same with no interval stretched: what the policy asks for. effective > wanted means the replica's probe budget is stretching this pool.")
  private String wanted;

  public DetectionStatus() {}

  public DetectionStatus(String effective, String wanted) {
    this.effective = effective;
    this.wanted = wanted;
  }

  public String getEffective() {
    return effective;
  }

  public void setEffective(String effective) {
    this.effective = effective;
  }

  public String getWanted() {
    return wanted;
  }

  public void setWanted(String wanted) {
    this.wanted = wanted;
  }
}
