package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Flap damping after BGP route-flap damping (RFC 2439); docs/design.md §2.1. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self.reuseThreshold < self.suppressThreshold",
    message = "reuseThreshold must be below suppressThreshold",
    fieldPath = ".reuseThreshold")
public class Damping {

  @JsonPropertyDescription(
      "Merit added to a backend at each active transition Up to Down or Down to Up (the first verdict of a new backend is no flap).")
  @Default("1000")
  @Min(1)
  @Max(1000000)
  private Integer penalty = 1000;

  @JsonPropertyDescription(
      "A backend whose merit is above this right after a penalty is damped: not published as ready (like an ejection; still counted as decided for panic) until released.")
  @Default("3000")
  @Min(1)
  @Max(1000000)
  private Integer suppressThreshold = 3000;

  @JsonPropertyDescription(
      "A damped backend is released at the first moment its decaying merit is at or below this; below suppressThreshold.")
  @Default("750")
  @Min(1)
  @Max(1000000)
  private Integer reuseThreshold = 750;

  @JsonPropertyDescription(
      "The merit halves every halfLife: its value t after it was set is merit x 2^(-t / halfLife). A duration, at least 1s.")
  @Default("60s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.IF_DURATION + "duration(self) >= duration('1s')",
      message = "halfLife must be at least 1s")
  private String halfLife = "60s";

  @JsonPropertyDescription(
      "No suppression outlasts this after the last flap: the merit is capped at reuseThreshold x 2^(maxSuppressTime / halfLife). A duration, positive and at most 1000 x halfLife.")
  @Default("300s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.POSITIVE_DURATION_RULE,
      message = "maxSuppressTime must be positive")
  private String maxSuppressTime = "300s";

  public Integer getPenalty() {
    return penalty;
  }

  public void setPenalty(Integer penalty) {
    this.penalty = penalty;
  }

  public Integer getSuppressThreshold() {
    return suppressThreshold;
  }

  public void setSuppressThreshold(Integer suppressThreshold) {
    this.suppressThreshold = suppressThreshold;
  }

  public Integer getReuseThreshold() {
    return reuseThreshold;
  }

  public void setReuseThreshold(Integer reuseThreshold) {
    this.reuseThreshold = reuseThreshold;
  }

  public String getHalfLife() {
    return halfLife;
  }

  public void setHalfLife(String halfLife) {
    this.halfLife = halfLife;
  }

  public String getMaxSuppressTime() {
    return maxSuppressTime;
  }

  public void setMaxSuppressTime(String maxSuppressTime) {
    this.maxSuppressTime = maxSuppressTime;
  }
}
