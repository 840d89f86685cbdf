package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Failure-percentage outlier detection: an absolute threshold on the share of failed requests. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FailurePercentageRule extends RequestVolumeRule {

  /** Envoy's {@code failure_percentage_request_volume}. */
  private static final int DEFAULT_REQUEST_VOLUME = 50;

  @JsonPropertyDescription(
      "Eject when more than this percent of a backend's requests in the sweep interval failed.")
  @Default("85")
  @Min(0)
  @Max(100)
  private Integer threshold = 85;

  public FailurePercentageRule() {
    super(DEFAULT_REQUEST_VOLUME);
  }

  public Integer getThreshold() {
    return threshold;
  }

  public void setThreshold(Integer threshold) {
    this.threshold = threshold;
  }

  @Override
  @Default("" + DEFAULT_REQUEST_VOLUME)
  public Integer getRequestVolume() {
    return super.getRequestVolume();
  }
}
