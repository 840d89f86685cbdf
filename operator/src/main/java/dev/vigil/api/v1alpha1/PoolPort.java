package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;

/** One port of the pool: the Service port and the Pod port behind it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PoolPort {

  @JsonPropertyDescription("Port name, copied to the Service port and the EndpointSlice port.")
  @Pattern(ApiFormats.PORT_NAME)
  @Size(max = 15)
  private String name;

  @JsonPropertyDescription("Service port.")
  @Required
  @Min(1)
  @Max(65535)
  private Integer port;

  @JsonPropertyDescription(
      "Port on the Pod, as a number or a container port name. Defaults to port.")
  @ValidationRule(
      value = ApiFormats.PORT_IN_LIST_RULE,
      message = ApiFormats.PORT_IN_LIST_RULE_MESSAGE)
  private IntOrString targetPort;

  @JsonPropertyDescription("Transport protocol: TCP, UDP or SCTP.")
  @Default("TCP")
  private PortProtocol protocol = PortProtocol.TCP;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public Integer getPort() {
    return port;
  }

  public void setPort(Integer port) {
    this.port = port;
  }

  public IntOrString getTargetPort() {
    return targetPort;
  }

  public void setTargetPort(IntOrString targetPort) {
    this.targetPort = targetPort;
  }

  public PortProtocol getProtocol() {
    return protocol;
  }

  public void setProtocol(PortProtocol protocol) {
    this.protocol = protocol;
  }

  public PoolPort() {}

  public PoolPort(String name, int port, IntOrString targetPort) {
    this.name = name;
    this.port = port;
    this.targetPort = targetPort;
  }
}
