package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Success-rate outlier detection: compares each backend with its peers. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SuccessRateRule {

  @JsonPropertyDescription(
      "Minimum number of backends with at least requestVolume requests in the sweep interval for this rule to run at all.")
  @Default("5")
  @Min(1)
  @Max(10000)
  private Integer minimumHosts = 5;

  @JsonPropertyDescription(
      "Minimum number of requests to a backend in the sweep interval for it to be judged (and to count toward minimumHosts).")
  @Default("100")
  @Min(1)
  @Max(1000000)
  private Integer requestVolume = 100;

  @JsonPropertyDescription(
      "Eject when a backend's success rate is below mean - stdevFactor x standard deviation of the qualifying backends.")
  @Default("1.9")
  @Min(value = 0, inclusive = false)
  @Max(10)
  private Double stdevFactor = 1.9;

  @JsonPropertyDescription(
      "false makes this rule a dry run: would-be ejections are reported, nobody is ejected.")
  @Default("true")
  private Boolean enforce = true;

  public Integer getMinimumHosts() {
    return minimumHosts;
  }

  public void setMinimumHosts(Integer minimumHosts) {
    this.minimumHosts = minimumHosts;
  }

  public Integer getRequestVolume() {
    return requestVolume;
  }

  public void setRequestVolume(Integer requestVolume) {
    this.requestVolume = requestVolume;
  }

  public Double getStdevFactor() {
    return stdevFactor;
  }

  public void setStdevFactor(Double stdevFactor) {
    this.stdevFactor = stdevFactor;
  }

  public Boolean getEnforce() {
    return enforce;
  }

  public void setEnforce(Boolean enforce) {
    this.enforce = enforce;
  }
}
