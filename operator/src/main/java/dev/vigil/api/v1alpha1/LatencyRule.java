package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/**
 * Latency outlier detection: a backend much slower than its peers and slower than an absolute
 * floor.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class LatencyRule extends OutlierRule {

  @JsonPropertyDescription(
      "Eject when a backend's mean latency in the sweep interval is above factor x the median of the pool's backends (and above floor).")
  @Default("3.0")
  @Min(1)
  @Max(100)
  private Double factor = 3.0;

  @JsonPropertyDescription(
      "Minimum number of latency samples of a backend in the sweep interval for it to be judged.")
  @Default("20")
  @Min(1)
  @Max(1000000)
  private Integer minimumSamples = 20;

  @JsonPropertyDescription(
      "Absolute floor: a backend whose mean latency is below this is never ejected for latency, however it compares with its peers.")
  @Default("200ms")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  private String floor = "200ms";

  public Double getFactor() {
    return factor;
  }

  public void setFactor(Double factor) {
    this.factor = factor;
  }

  public Integer getMinimumSamples() {
    return minimumSamples;
  }

  public void setMinimumSamples(Integer minimumSamples) {
    this.minimumSamples = minimumSamples;
  }

  public String getFloor() {
    return floor;
  }

  public void setFloor(String floor) {
    this.floor = floor;
  }
}
