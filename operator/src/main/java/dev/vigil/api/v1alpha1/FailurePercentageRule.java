package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Failure-percentage outlier detection: an absolute threshold on the share of failed requests. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FailurePercentageRule {

  @JsonPropertyDescription(
      "Eject when more than this percent of a backend's requests in the sweep interval failed.")
  @Default("85")
  @Min(0)
  @Max(100)
  private Integer threshold = 85;

  @JsonPropertyDescription(
      "Minimum number of backends with at least requestVolume requests in the sweep interval for this rule to run at all.")
  @Default("5")
  @Min(1)
  @Max(10000)
  private Integer minimumHosts = 5;

  @JsonPropertyDescription(
      "Minimum number of requests to a backend in the sweep interval for it to be judged (and to count toward minimumHosts).")
  @Default("50")
  @Min(1)
  @Max(1000000)
  private Integer requestVolume = 50;

  @JsonPropertyDescription(
      "false makes this rule a dry run: would-be ejections are reported, nobody is ejected.")
  @Default("true")
  private Boolean enforce = true;

  public Integer getThreshold() {
    return threshold;
  }

  public void setThreshold(Integer threshold) {
    this.threshold = threshold;
  }

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

  public Boolean getEnforce() {
    return enforce;
  }

  public void setEnforce(Boolean enforce) {
    this.enforce = enforce;
  }
}
