package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;

/** Active probing of each backend: protocol, cadence and hysteresis. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value =
        "!(self.timeout.matches("
            + ApiFormats.DURATION_CEL
            + ") && self.interval.matches("
            + ApiFormats.DURATION_CEL
            + ")) || duration(self.timeout) < duration(self.interval)",
    message = "timeout must be shorter than interval",
    fieldPath = ".timeout")
@ValidationRule(
    value =
        "!has(self.fastInterval) || !(self.fastInterval.matches("
            + ApiFormats.DURATION_CEL
            + ") && self.timeout.matches("
            + ApiFormats.DURATION_CEL
            + ")) || duration(self.fastInterval) > duration(self.timeout)",
    message = "fastInterval must be longer than timeout",
    fieldPath = ".fastInterval")
@ValidationRule(
    value =
        "!has(self.downInterval) || !(self.downInterval.matches("
            + ApiFormats.DURATION_CEL
            + ") && self.timeout.matches("
            + ApiFormats.DURATION_CEL
            + ")) || duration(self.downInterval) > duration(self.timeout)",
    message = "downInterval must be longer than timeout",
    fieldPath = ".downInterval")
@ValidationRule(
    value =
        "!has(self.maxInterval) || !(self.maxInterval.matches("
            + ApiFormats.DURATION_CEL
            + ") && self.interval.matches("
            + ApiFormats.DURATION_CEL
            + ")) || duration(self.maxInterval) >= duration(self.interval)",
    message = "maxInterval must be at least interval",
    fieldPath = ".maxInterval")
@ValidationRule(
    value =
        "!has(self.http) || !has(self.http.version) || self.http.version == '1.1' || self.protocol in ['HTTP', 'HTTPS']",
    message = "http.version 2 applies only to protocol HTTP or HTTPS",
    fieldPath = ".http.version")
@ValidationRule(
    value =
        "!has(self.grpc) || !has(self.grpc.watch) || !self.grpc.watch || self.protocol == 'GRPC'",
    message = "grpc.watch applies only to protocol GRPC",
    fieldPath = ".grpc.watch")
@ValidationRule(
    value = "!has(self.websocket) || self.protocol == 'WebSocket'",
    message = "websocket applies only to protocol WebSocket",
    fieldPath = ".websocket")
public class ActiveCheck {

  @JsonPropertyDescription(
      "Probe protocol: HTTP, HTTPS, TCP, GRPC or WebSocket (an HTTP/1.1 upgrade that must answer 101 with the right Sec-WebSocket-Accept; over TLS when tls is set).")
  @Default("HTTP")
  private Protocol protocol = Protocol.HTTP;

  @JsonPropertyDescription(
      "Port to probe on the Pod, as a number (1-65535) or a container port name. Defaults to the targetPort of the pool's first port.")
  @ValidationRule(value = ApiFormats.PORT_RULE, message = ApiFormats.PORT_RULE_MESSAGE)
  private IntOrString port;

  @JsonPropertyDescription(
      "Time between the starts of two probes of one backend, as a duration such as 5s or 500ms; at least 100ms.")
  @Default("5s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.AT_LEAST_100MS_RULE,
      message = "interval must be at least 100ms")
  private String interval = "5s";

  @JsonPropertyDescription(
      "Deadline of one probe, as a duration such as 2s or 750ms; must be shorter than interval, so probes of one backend never overlap.")
  @Default("2s")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(value = ApiFormats.POSITIVE_DURATION_RULE, message = "timeout must be positive")
  private String timeout = "2s";

  @JsonPropertyDescription(
      "Time between probes of a backend that is mid-streak toward a change: Up with at least one failed probe in a row, or Down with at least one passed probe in a row (HAProxy's fastinter). With interval 10s, fastInterval 1s and fall 3 a dead backend is out after about 12s instead of 30s, for almost no extra steady cost. A duration, at least 100ms and longer than timeout; defaults to interval.")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.AT_LEAST_100MS_RULE,
      message = "fastInterval must be at least 100ms")
  private String fastInterval;

  @JsonPropertyDescription(
      "Time between probes of a backend that is Down with no passed probe yet (HAProxy's downinter, Envoy's unhealthy_interval), e.g. longer than interval to probe dead backends less often. A duration, at least 100ms and longer than timeout; defaults to interval.")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.AT_LEAST_100MS_RULE,
      message = "downInterval must be at least 100ms")
  private String downInterval;

  @JsonPropertyDescription(
      "The longest the probe budget (--probe-budget, docs/checks.md) may stretch any interval of this policy's backends to when a replica is asked for more probes than it may make. A duration, at least interval; defaults to 10 x interval, at most 5m.")
  @Pattern(ApiFormats.DURATION)
  @Size(max = ApiFormats.DURATION_MAX_LENGTH)
  @ValidationRule(
      value = ApiFormats.AT_LEAST_100MS_RULE,
      message = "maxInterval must be at least 100ms")
  private String maxInterval;

  @JsonPropertyDescription(
      "Passive successes (reported real requests), with no passive failure, within the last 10 x interval that make an Up backend quiet: under the probe budget quiet backends are stretched first, as real traffic already vouches for them. 0 makes no backend quiet.")
  @Default("10")
  @Min(0)
  @Max(100)
  private Integer quietMinRequests = 10;

  @JsonPropertyDescription(
      "Jitter in percent: each wait is interval plus or minus this share, and the first probe of each backend starts at a random offset in [0, interval), so many backends never probe in one burst.")
  @Default("10")
  @Min(0)
  @Max(50)
  private Integer jitterPercent = 10;

  @JsonPropertyDescription("Consecutive passing probes that bring a Down backend Up.")
  @Default("2")
  @Min(1)
  @Max(100)
  private Integer rise = 2;

  @JsonPropertyDescription("Consecutive failing probes that take an Up backend Down.")
  @Default("3")
  @Min(1)
  @Max(100)
  private Integer fall = 3;

  @JsonPropertyDescription(
      "Keep one connection per backend open between probes (cheaper, as Envoy does). Off by default: a fresh connection per probe, as HAProxy does, also catches a backend whose accept queue is stuck.")
  @Default("false")
  private Boolean reuseConnection = false;

  @JsonPropertyDescription(
      "HTTP and HTTPS probe request and pass criteria. Used when protocol is HTTP or HTTPS; absent means GET /healthz expecting 200-399.")
  private HttpCheck http;

  @JsonPropertyDescription(
      "TCP probe options. Used when protocol is TCP; absent means a successful connect passes.")
  private TcpCheck tcp;

  @JsonPropertyDescription(
      "gRPC probe options (grpc.health.v1.Health/Check). Used when protocol is GRPC.")
  private GrpcCheck grpc;

  @JsonPropertyDescription(
      "TLS settings for HTTPS probes, and for gRPC and WebSocket probes over TLS (set for those only when TLS is wanted).")
  private TlsConfig tls;

  @JsonPropertyDescription(
      "WebSocket probe options. Used when protocol is WebSocket; absent means path /.")
  private WebSocketCheck websocket;

  @JsonPropertyDescription(
      "Optional agent check (HAProxy's agent-check): the backend reports up, down, ready, drain or maint on a side port, asked every agent.interval with active.timeout as deadline. Its answer combines with the health verdict in the order of docs/decision.md; a drain or maint does not count toward panic or the ejection cap.")
  private AgentCheck agent;

  public WebSocketCheck getWebsocket() {
    return websocket;
  }

  public void setWebsocket(WebSocketCheck websocket) {
    this.websocket = websocket;
  }

  public AgentCheck getAgent() {
    return agent;
  }

  public void setAgent(AgentCheck agent) {
    this.agent = agent;
  }

  public Protocol getProtocol() {
    return protocol;
  }

  public void setProtocol(Protocol protocol) {
    this.protocol = protocol;
  }

  public IntOrString getPort() {
    return port;
  }

  public void setPort(IntOrString port) {
    this.port = port;
  }

  public String getInterval() {
    return interval;
  }

  public void setInterval(String interval) {
    this.interval = interval;
  }

  public String getTimeout() {
    return timeout;
  }

  public void setTimeout(String timeout) {
    this.timeout = timeout;
  }

  public String getFastInterval() {
    return fastInterval;
  }

  public void setFastInterval(String fastInterval) {
    this.fastInterval = fastInterval;
  }

  public String getMaxInterval() {
    return maxInterval;
  }

  public void setMaxInterval(String maxInterval) {
    this.maxInterval = maxInterval;
  }

  public Integer getQuietMinRequests() {
    return quietMinRequests;
  }

  public void setQuietMinRequests(Integer quietMinRequests) {
    this.quietMinRequests = quietMinRequests;
  }

  public String getDownInterval() {
    return downInterval;
  }

  public void setDownInterval(String downInterval) {
    this.downInterval = downInterval;
  }

  public Integer getJitterPercent() {
    return jitterPercent;
  }

  public void setJitterPercent(Integer jitterPercent) {
    this.jitterPercent = jitterPercent;
  }

  public Integer getRise() {
    return rise;
  }

  public void setRise(Integer rise) {
    this.rise = rise;
  }

  public Integer getFall() {
    return fall;
  }

  public void setFall(Integer fall) {
    this.fall = fall;
  }

  public Boolean getReuseConnection() {
    return reuseConnection;
  }

  public void setReuseConnection(Boolean reuseConnection) {
    this.reuseConnection = reuseConnection;
  }

  public HttpCheck getHttp() {
    return http;
  }

  public void setHttp(HttpCheck http) {
    this.http = http;
  }

  public TcpCheck getTcp() {
    return tcp;
  }

  public void setTcp(TcpCheck tcp) {
    this.tcp = tcp;
  }

  public GrpcCheck getGrpc() {
    return grpc;
  }

  public void setGrpc(GrpcCheck grpc) {
    this.grpc = grpc;
  }

  public TlsConfig getTls() {
    return tls;
  }

  public void setTls(TlsConfig tls) {
    this.tls = tls;
  }
}
