package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Success-rate outlier detection: compares each backend with its peers. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SuccessRateRule extends RequestVolumeRule {

  /** Envoy's {@code success_rate_request_volume}. */
  private static final int DEFAULT_REQUEST_VOLUME = 100;

  @JsonPropertyDescription(
      "Eject when a backend's success rate is below mean - stdevFactor x standard deviation of the qualifying backends.")
  @Default("1.9")
  @Min(value = 0, inclusive = false)
  @Max(10)
  private Double stdevFactor = 1.9;

  public SuccessRateRule() {
    super(DEFAULT_REQUEST_VOLUME);
  }

  public Double getStdevFactor() {
    return stdevFactor;
  }

  public void setStdevFactor(Double stdevFactor) {
    this.stdevFactor = stdevFactor;
  }

  @Override
  @Default("" + DEFAULT_REQUEST_VOLUME)
  public Integer getRequestVolume() {
    return super.getRequestVolume();
  }
}
