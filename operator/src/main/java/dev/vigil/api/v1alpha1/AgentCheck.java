package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * HAProxy's agent check (docs/checks.md, docs/decision.md): the backend says {@code up}, {@code
 * down}, {@code ready}, {@code drain} or {@code maint} on a side port.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AgentCheck {

  @JsonPropertyDescription(
      "Port on the Pod where the agent answers: Vigil connects, reads one line (at most 256 bytes) and closes. The line is HAProxy's agent reply: words separated by spaces or commas (up, down/failed/stopped, ready, drain, maint, a weight such as 0% = drain), text after # is the reason.")
  @Required
  @Min(1)
  @Max(65535)
  private Integer port;

  @JsonPropertyDescription(
      "Time between two questions to one backend's agent, as a duration; at least 100ms and longer than active.timeout (the agent's deadline). Defaults to active.interval.")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.AT_LEAST_100MS_RULE,
      message = "agent.interval must be at least 100ms")
  private String interval;

  public AgentCheck() {}

  public AgentCheck(int port, String interval) {
    this.port = port;
    this.interval = interval;
  }

  public Integer getPort() {
    return port;
  }

  public void setPort(Integer port) {
    this.port = port;
  }

  public String getInterval() {
    return interval;
  }

  public void setInterval(String interval) {
    this.interval = interval;
  }
}
