package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/**
 * What Envoy's two request-count outlier rules ({@link SuccessRateRule}, {@link
 * FailurePercentageRule}) share beyond {@link OutlierRule}: which backends qualify to be judged,
 * and how many must qualify. The CRD generator reads these fields into each subclass's schema. The
 * rules' {@code requestVolume} defaults differ (Envoy's 100 and 50), so each subclass passes its
 * own to the constructor and declares it on its {@link #getRequestVolume()} override, where the
 * generator reads it as the schema default.
 */
public abstract class RequestVolumeRule extends OutlierRule {

  @JsonPropertyDescription(
      "Minimum number of backends with at least requestVolume requests in the sweep interval for this rule to run at all.")
  @Default("5")
  @Min(1)
  @Max(10000)
  private Integer minimumHosts = 5;

  @JsonPropertyDescription(
      "Minimum number of requests to a backend in the sweep interval for it to be judged (and to count toward minimumHosts).")
  @Min(1)
  @Max(1000000)
  private Integer requestVolume;

  /**
   * @param defaultRequestVolume the value of the subclass's {@code @Default} on {@link
   *     #getRequestVolume()}
   */
  protected RequestVolumeRule(int defaultRequestVolume) {
    this.requestVolume = defaultRequestVolume;
  }

  public Integer getMinimumHosts() {
    return minimumHosts;
  }

  public void setMinimumHosts(Integer minimumHosts) {
    this.minimumHosts = minimumHosts;
  }

  /** Overridden by each rule only to declare its schema default. */
  public Integer getRequestVolume() {
    return requestVolume;
  }

  public void setRequestVolume(Integer requestVolume) {
    this.requestVolume = requestVolume;
  }
}
