package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Passive checks: ejection of backends on the outcomes of real requests. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value =
        "!(self.maxEjectionTime.matches("
            + ApiFormats.DURATION_CEL
            + ") && self.baseEjectionTime.matches("
            + ApiFormats.DURATION_CEL
            + ")) || duration(self.maxEjectionTime) >= duration(self.baseEjectionTime)",
    message = "maxEjectionTime must be at least baseEjectionTime",
    fieldPath = ".maxEjectionTime")
public class PassiveCheck {

  @JsonPropertyDescription(
      "false makes every passive rule a dry run: would-be ejections are reported in status, Events and metrics, and nobody is ejected. Each statistical rule also has its own enforce; a rule ejects only when both are true.")
  @Default("true")
  private Boolean enforce = true;

  @JsonPropertyDescription(
      "Failed real requests in a row that eject a backend; 0 disables the rule. With splitLocalOrigin, only errors that originate upstream count here.")
  @Default("5")
  @Min(0)
  @Max(1000)
  private Integer consecutiveErrors = 5;

  @JsonPropertyDescription(
      "Like consecutiveErrors, for errors that originate at the reporting proxy itself (connect failures, timeouts); used when splitLocalOrigin is true. 0 disables the rule.")
  @Default("5")
  @Min(0)
  @Max(1000)
  private Integer consecutiveLocalOriginErrors = 5;

  @JsonPropertyDescription(
      "Count local-origin errors apart from upstream errors, so a proxy's own connect failures do not eject a healthy backend on the upstream counter.")
  @Default("true")
  private Boolean splitLocalOrigin = true;

  @JsonPropertyDescription(
      "An ejection lasts baseEjectionTime times the number of times the backend has been ejected, capped at maxEjectionTime.")
  @Default("30s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.POSITIVE_DURATION_RULE,
      message = "baseEjectionTime must be positive")
  private String baseEjectionTime = "30s";

  @JsonPropertyDescription("Cap on the length of one ejection; at least baseEjectionTime.")
  @Default("300s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  private String maxEjectionTime = "300s";

  @JsonPropertyDescription(
      "An ejection that would put more than this percent of the pool's non-draining backends out is refused (and counted, reported as an EjectionRefused Event).")
  @Default("10")
  @Min(0)
  @Max(100)
  private Integer maxEjectionPercent = 10;

  @JsonPropertyDescription(
      "Allow one ejection when no other backend is ejected, even where maxEjectionPercent of the pool rounds to zero.")
  @Default("false")
  private Boolean alwaysEjectOne = false;

  @JsonPropertyDescription(
      "Period of the sweep: each sweep lowers by one the ejection multiplier of every backend that is neither ejected nor erring, and runs the statistical rules. At least 100ms.")
  @Default("10s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.AT_LEAST_100MS_RULE,
      message = "sweepInterval must be at least 100ms")
  private String sweepInterval = "10s";

  @JsonPropertyDescription(
      "A passing active probe ends an ejection early (the multiplier is kept). Off by default: otherwise a passive ejection lasts only until the next probe.")
  @Default("false")
  private Boolean unejectOnActivePass = false;

  @JsonPropertyDescription(
      "Failed real requests within failureWindow that eject a backend (nginx max_fails within fail_timeout); unlike consecutiveErrors, successes in between do not reset the count. Counts the same failures as consecutiveErrors (with splitLocalOrigin, upstream ones only); an ejection empties the window. 0 disables the rule.")
  @Default("0")
  @Min(0)
  @Max(1000)
  private Integer windowFailures = 0;

  @JsonPropertyDescription(
      "The window of windowFailures: failures older than this no longer count (nginx fail_timeout).")
  @Default("10s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.IF_DURATION + "duration(self) >= duration('1ms')",
      message = "failureWindow must be at least 1ms")
  private String failureWindow = "10s";

  @JsonPropertyDescription(
      "Success-rate outlier detection against peers (as Envoy's): at each sweep, eject a backend whose success rate is below mean - stdevFactor x stdev of the pool. Absent means off.")
  private SuccessRateRule successRate;

  @JsonPropertyDescription(
      "Failure-percentage outlier detection: at each sweep, eject a backend whose share of failed requests is above threshold. Absent means off.")
  private FailurePercentageRule failurePercentage;

  @JsonPropertyDescription(
      "Latency outlier detection: at each sweep, eject a backend whose mean latency is above factor x the pool's median AND above floor. Absent means off.")
  private LatencyRule latency;

  public Boolean getEnforce() {
    return enforce;
  }

  public void setEnforce(Boolean enforce) {
    this.enforce = enforce;
  }

  public Integer getConsecutiveErrors() {
    return consecutiveErrors;
  }

  public void setConsecutiveErrors(Integer consecutiveErrors) {
    this.consecutiveErrors = consecutiveErrors;
  }

  public Integer getConsecutiveLocalOriginErrors() {
    return consecutiveLocalOriginErrors;
  }

  public void setConsecutiveLocalOriginErrors(Integer consecutiveLocalOriginErrors) {
    this.consecutiveLocalOriginErrors = consecutiveLocalOriginErrors;
  }

  public Boolean getSplitLocalOrigin() {
    return splitLocalOrigin;
  }

  public void setSplitLocalOrigin(Boolean splitLocalOrigin) {
    this.splitLocalOrigin = splitLocalOrigin;
  }

  public String getBaseEjectionTime() {
    return baseEjectionTime;
  }

  public void setBaseEjectionTime(String baseEjectionTime) {
    this.baseEjectionTime = baseEjectionTime;
  }

  public String getMaxEjectionTime() {
    return maxEjectionTime;
  }

  public void setMaxEjectionTime(String maxEjectionTime) {
    this.maxEjectionTime = maxEjectionTime;
  }

  public Integer getMaxEjectionPercent() {
    return maxEjectionPercent;
  }

  public void setMaxEjectionPercent(Integer maxEjectionPercent) {
    this.maxEjectionPercent = maxEjectionPercent;
  }

  public Boolean getAlwaysEjectOne() {
    return alwaysEjectOne;
  }

  public void setAlwaysEjectOne(Boolean alwaysEjectOne) {
    this.alwaysEjectOne = alwaysEjectOne;
  }

  public String getSweepInterval() {
    return sweepInterval;
  }

  public void setSweepInterval(String sweepInterval) {
    this.sweepInterval = sweepInterval;
  }

  public Boolean getUnejectOnActivePass() {
    return unejectOnActivePass;
  }

  public void setUnejectOnActivePass(Boolean unejectOnActivePass) {
    this.unejectOnActivePass = unejectOnActivePass;
  }

  public Integer getWindowFailures() {
    return windowFailures;
  }

  public void setWindowFailures(Integer windowFailures) {
    this.windowFailures = windowFailures;
  }

  public String getFailureWindow() {
    return failureWindow;
  }

  public void setFailureWindow(String failureWindow) {
    this.failureWindow = failureWindow;
  }

  public SuccessRateRule getSuccessRate() {
    return successRate;
  }

  public void setSuccessRate(SuccessRateRule successRate) {
    this.successRate = successRate;
  }

  public FailurePercentageRule getFailurePercentage() {
    return failurePercentage;
  }

  public void setFailurePercentage(FailurePercentageRule failurePercentage) {
    this.failurePercentage = failurePercentage;
  }

  public LatencyRule getLatency() {
    return latency;
  }

  public void setLatency(LatencyRule latency) {
    this.latency = latency;
  }
}
