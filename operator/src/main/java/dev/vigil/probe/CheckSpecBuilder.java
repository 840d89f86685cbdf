package dev.vigil.probe;

import com.google.re2j.Pattern;
import java.time.Duration;

/** Builds a {@link CheckSpec}; every setter is optional (the defaults are docs/design.md §1's). */
public final class CheckSpecBuilder {
  private ProbeProtocol protocol = ProbeProtocol.HTTP;
  private int port;
  private Duration timeout = CheckSpec.DEFAULT_TIMEOUT;
  private CheckSpec.Http http = CheckSpec.Http.DEFAULT;
  private CheckSpec.Tcp tcp = CheckSpec.Tcp.DEFAULT;
  private CheckSpec.Grpc grpc = CheckSpec.Grpc.DEFAULT;
  private CheckSpec.Tls tls = CheckSpec.Tls.NONE;
  private boolean reuseConnection;
  private CheckSpec.WebSocket websocket = CheckSpec.WebSocket.DEFAULT;
  private boolean http2;
  private CheckSpec.Agent agent = CheckSpec.Agent.NONE;

  CheckSpecBuilder() {}

  /** {@code active.http.version: "2"}. */
  public CheckSpecBuilder http2(boolean http2) {
    this.http2 = http2;
    return this;
  }

  public CheckSpecBuilder websocket(CheckSpec.WebSocket websocket) {
    this.websocket = websocket;
    return this;
  }

  public CheckSpecBuilder protocol(ProbeProtocol protocol) {
    this.protocol = protocol;
    return this;
  }

  public CheckSpecBuilder port(int port) {
    this.port = port;
    return this;
  }

  public CheckSpecBuilder timeout(Duration timeout) {
    this.timeout = timeout;
    return this;
  }

  public CheckSpecBuilder http(CheckSpec.Http http) {
    this.http = http;
    return this;
  }

  /** Shorthand: the default HTTP request with other expected statuses, e.g. {@code "200"}. */
  public CheckSpecBuilder expectedStatuses(String... values) {
    this.http =
        http(
            ExpectedStatuses.parse("active.http.expectedStatuses", java.util.List.of(values)),
            http.bodyMatch());
    return this;
  }

  /** Shorthand: {@code active.http.bodyMatch}. */
  public CheckSpecBuilder bodyMatch(String regex) {
    this.http = http(http.expectedStatuses(), CheckSpec.Http.compileBodyMatch(regex));
    return this;
  }

  /** The HTTP request as it is, with these expected statuses and body match. */
  private CheckSpec.Http http(ExpectedStatuses expected, Pattern bodyMatch) {
    return new CheckSpec.Http(
        http.method(),
        http.path(),
        http.host(),
        http.headers(),
        expected,
        bodyMatch,
        http.body(),
        http.headerMatch(),
        http.failFastStatuses());
  }

  public CheckSpecBuilder tcp(CheckSpec.Tcp tcp) {
    this.tcp = tcp;
    return this;
  }

  public CheckSpecBuilder grpc(CheckSpec.Grpc grpc) {
    this.grpc = grpc;
    return this;
  }

  public CheckSpecBuilder tls(CheckSpec.Tls tls) {
    this.tls = tls;
    return this;
  }

  public CheckSpecBuilder reuseConnection(boolean reuseConnection) {
    this.reuseConnection = reuseConnection;
    return this;
  }

  /** {@code active.agent}; {@link CheckSpec.Agent#NONE} by default. */
  public CheckSpecBuilder agent(CheckSpec.Agent v) {
    agent = v;
    return this;
  }

  public CheckSpec build() {
    return new CheckSpec(
        protocol, port, timeout, http, tcp, grpc, tls, reuseConnection, websocket, http2, agent);
  }
}
