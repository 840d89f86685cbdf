package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Checker quorum across zones (docs/design.md §8): the owner of a pool asks checkers in other zones
 * to confirm each Down before it publishes it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Quorum {

  @JsonPropertyDescription(
      "Voters in other zones the owner asks to confirm each Down: per other zone, the replica that ranks highest for the pool. 1 to 5.")
  @Default("2")
  @Min(1)
  @Max(5)
  private Integer confirmers = 2;

  @JsonPropertyDescription(
      "A backend goes Down only when down votes x 100 > downPercent x deciding voters (the owner, which votes Down, and every voter that answered Up or Down; an abstention counts for neither). 0 to 99: at 100 no Down could ever be confirmed.")
  @Default("50")
  @Min(0)
  @Max(99)
  private Integer downPercent = 50;

  @JsonPropertyDescription(
      "How long the owner waits for the voters' answers after its own fall, as a duration such as 20s; a voter that has not answered by then abstains. Defaults to active.interval x active.fall + active.timeout; must be positive.")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(value = ApiFormats.POSITIVE_DURATION_RULE, message = "timeout must be positive")
  private String timeout;

  public Integer getConfirmers() {
    return confirmers;
  }

  public void setConfirmers(Integer confirmers) {
    this.confirmers = confirmers;
  }

  public Integer getDownPercent() {
    return downPercent;
  }

  public void setDownPercent(Integer downPercent) {
    this.downPercent = downPercent;
  }

  public String getTimeout() {
    return timeout;
  }

  public void setTimeout(String timeout) {
    this.timeout = timeout;
  }
}
