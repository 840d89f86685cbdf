package dev.vigil.probe;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How to check one backend: the resolved, immutable form of a HealthPolicy's {@code active} block
 * minus the cadence (see {@link ProbeSchedule}). Defaults as docs/design.md §1. Build with {@link
 * #builder()}; validation errors name the {@code active.*} field.
 *
 * @param protocol HTTP, HTTPS, TCP or GRPC
 * @param port 0 = the {@link ProbeTarget}'s port (the usual case: the caller resolves port names
 *     into the target); otherwise the port to probe instead
 * @param timeout the deadline of one probe, connect included
 * @param http the HTTP(S) request and verdict settings
 * @param tcp the optional payload and expected reply prefix
 * @param grpc the grpc.health.v1 service name
 * @param tls HTTPS, gRPC-over-TLS, wss and TCP-over-TLS settings; for GRPC, WEBSOCKET and TCP, TLS
 *     is used only when this is not {@link Tls#NONE}
 * @param websocket the WebSocket upgrade's path (protocol WEBSOCKET; {@code http}'s host and
 *     headers go with it)
 * @param http2 HTTP and HTTPS over HTTP/2 ({@code active.http.version: "2"}): h2c with prior
 *     knowledge in clear, ALPN h2 over TLS
 * @param reuseConnection keep one connection per backend between probes (HTTP, HTTPS) instead of a
 *     fresh connection per probe; gRPC always keeps its HTTP/2 connection
 * @param agent the agent check ({@code active.agent}), or {@link Agent#NONE}
 */
public record CheckSpec(
    ProbeProtocol protocol,
    int port,
    Duration timeout,
    Http http,
    Tcp tcp,
    Grpc grpc,
    Tls tls,
    boolean reuseConnection,
    WebSocket websocket,
    boolean http2,
    Agent agent) {

  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

  public CheckSpec {
    Objects.requireNonNull(protocol, "active.protocol");
    Objects.requireNonNull(timeout, "active.timeout");
    Objects.requireNonNull(http, "active.http");
    Objects.requireNonNull(tcp, "active.tcp");
    Objects.requireNonNull(grpc, "active.grpc");
    Objects.requireNonNull(tls, "active.tls");
    Objects.requireNonNull(websocket, "active.websocket");
    agent = agent == null ? Agent.NONE : agent;
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("active.port: must be 1..65535, got " + port);
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("active.timeout: must be positive, got " + timeout);
    }
  }

  public static CheckSpecBuilder builder() {
    return new CheckSpecBuilder();
  }

  /** A builder holding this spec's values. */
  public CheckSpecBuilder toBuilder() {
    return new CheckSpecBuilder()
        .protocol(protocol)
        .port(port)
        .timeout(timeout)
        .http(http)
        .tcp(tcp)
        .grpc(grpc)
        .tls(tls)
        .reuseConnection(reuseConnection)
        .websocket(websocket)
        .http2(http2)
        .agent(agent);
  }

  /**
   * HAProxy's agent check: ask the agent on {@code port} every {@code interval}, with the check's
   * timeout as deadline (docs/decision.md, "Admin state and the agent").
   *
   * @param port the agent's port on the Pod; 0 = no agent
   */
  public record Agent(int port, Duration interval) {
    public static final Agent NONE = new Agent(0, Duration.ZERO);

    public Agent {
      Objects.requireNonNull(interval, "active.agent.interval");
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("active.agent.port: must be 1..65535, got " + port);
      }
      if (port > 0 && interval.toMillis() < 100) {
        throw new IllegalArgumentException(
            "active.agent.interval: must be at least 100ms, got " + interval.toMillis() + "ms");
      }
    }

    public boolean enabled() {
      return port > 0;
    }
  }

  /** The port to connect to for {@code target}. */
  public int portFor(ProbeTarget target) {
    return port == 0 ? target.port() : port;
  }

  /** Whether this check runs over TLS. */
  public boolean usesTls() {
    return protocol == ProbeProtocol.HTTPS
        || ((protocol == ProbeProtocol.GRPC
                || protocol == ProbeProtocol.WEBSOCKET
                || protocol == ProbeProtocol.TCP)
            && !tls.equals(Tls.NONE));
  }

  /**
   * The HTTP request and verdict.
   *
   * @param method request method, an HTTP token ({@code GET})
   * @param path request target, starting with {@code /}
   * @param host Host header value; null = the target's IP
   * @param headers extra request headers, in order
   * @param expectedStatuses statuses that pass
   * @param bodyMatch optional RE2 regular expression that must be found in the first 64 KiB of the
   *     body
   * @param body optional request body (at most {@link #MAX_BODY} bytes in UTF-8), sent with a
   *     {@code Content-Length}; null = none
   * @param headerMatch response headers that must be present, each with an optional value RE2
   *     regular expression; checked only when the status passes (the status decides first)
   * @param failFastStatuses statuses that fail at once (docs/design.md §2.2); disjoint from {@code
   *     expectedStatuses}
   */
  public record Http(
      String method,
      String path,
      String host,
      Map<String, String> headers,
      ExpectedStatuses expectedStatuses,
      Pattern bodyMatch,
      String body,
      List<HeaderMatch> headerMatch,
      ExpectedStatuses failFastStatuses) {

    /** The largest {@code active.http.body}, in bytes. */
    public static final int MAX_BODY = 4096;

    public static final Http DEFAULT =
        new Http("GET", "/healthz", null, Map.of(), ExpectedStatuses.DEFAULT, null);

    /** Without a body, header matches or fail-fast statuses. */
    public Http(
        String method,
        String path,
        String host,
        Map<String, String> headers,
        ExpectedStatuses expectedStatuses,
        Pattern bodyMatch) {
      this(method, path, host, headers, expectedStatuses, bodyMatch, null, null, null);
    }

    public Http {
      method = method == null ? "GET" : method;
      path = path == null ? "/healthz" : path;
      expectedStatuses = expectedStatuses == null ? ExpectedStatuses.DEFAULT : expectedStatuses;
      failFastStatuses = failFastStatuses == null ? ExpectedStatuses.NONE : failFastStatuses;
      headerMatch = headerMatch == null ? List.of() : List.copyOf(headerMatch);
      body = body == null || body.isEmpty() ? null : body;
      checkBody(body, method);
      int shared = failFastStatuses.firstShared(expectedStatuses);
      if (shared >= 0) {
        throw new IllegalArgumentException(
            "active.http.failFastStatuses: "
                + shared
                + " is also in expectedStatuses; the two must be disjoint");
      }
      headers =
          headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
      checkRequestLine(method, path, host);
      checkHeaders(headers);
    }

    private static void checkBody(String body, String method) {
      if (body != null && body.getBytes(StandardCharsets.UTF_8).length > MAX_BODY) {
        throw new IllegalArgumentException(
            "active.http.body: at most " + MAX_BODY + " bytes in UTF-8");
      }
      if (body != null && (method.equals("GET") || method.equals("HEAD"))) {
        throw new IllegalArgumentException(
            "active.http.body: needs a method that carries one, such as POST or PUT (not "
                + method
                + ")");
      }
    }

    private static void checkRequestLine(String method, String path, String host) {
      if (!isToken(method)) {
        throw new IllegalArgumentException("active.http.method: not an HTTP token: " + method);
      }
      if (!path.startsWith("/") || hasControl(path) || path.indexOf(' ') >= 0) {
        throw new IllegalArgumentException(
            "active.http.path: must start with / and contain no spaces or control characters");
      }
      if (host != null && (host.isEmpty() || hasControl(host) || host.indexOf(' ') >= 0)) {
        throw new IllegalArgumentException("active.http.host: invalid host " + host);
      }
    }

    private static void checkHeaders(Map<String, String> headers) {
      for (Map.Entry<String, String> h : headers.entrySet()) {
        if (!isToken(h.getKey())) {
          throw new IllegalArgumentException(
              "active.http.headers: not a header name: " + h.getKey());
        }
        if (h.getValue() == null || hasControl(h.getValue())) {
          throw new IllegalArgumentException(
              "active.http.headers." + h.getKey() + ": value must not contain control characters");
        }
      }
    }

    /** The request body in UTF-8, or null; made anew on each call (only when there is a body). */
    public byte[] bodyBytes() {
      return body == null ? null : body.getBytes(StandardCharsets.UTF_8);
    }

    /** Compiles {@code regex}, naming the field in the error. Null or empty = none. */
    public static Pattern compileBodyMatch(String regex) {
      if (regex == null || regex.isEmpty()) {
        return null;
      }
      return compileRegex("active.http.bodyMatch", regex);
    }

    /**
     * Compiles a tenant's pattern with RE2/J, whose matching time is linear in the input whatever
     * the pattern (it runs on a shared probe event loop); a pattern RE2 cannot take, such as a
     * backreference or lookaround, is refused naming {@code field}.
     */
    static Pattern compileRegex(String field, String regex) {
      try {
        return Pattern.compile(regex);
      } catch (PatternSyntaxException e) {
        throw new IllegalArgumentException(
            field
                + ": not a valid RE2 expression (RE2 syntax: no backreferences or lookaround, so"
                + " matching runs in linear time): "
                + e.getDescription()
                + " in "
                + e.getPattern(),
            e);
      }
    }

    private static boolean isToken(String s) {
      if (s == null || s.isEmpty()) {
        return false;
      }
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        boolean ok =
            (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
        if (!ok) {
          return false;
        }
      }
      return true;
    }

    static boolean hasControl(String s) {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c < 0x20 && c != '\t' || c == 0x7f) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * One {@code active.http.headerMatch} entry: a response header that must be present and, when
   * {@code value} is set, have a value in which that regex is found. Names compare without regard
   * to case; with several headers of that name, one matching value is enough.
   *
   * @param name the header name as written in the policy
   * @param value the value regex, or null (presence is enough)
   */
  public record HeaderMatch(String name, Pattern value) {
    public HeaderMatch {
      if (!Http.isToken(name)) {
        throw new IllegalArgumentException("active.http.headerMatch: not a header name: " + name);
      }
    }

    /**
     * Compiles one entry, naming the field in the error; an empty value regex means presence only.
     */
    public static HeaderMatch of(int index, String name, String valueRegex) {
      String field = "active.http.headerMatch[" + index + "]";
      if (name == null || !Http.isToken(name)) {
        throw new IllegalArgumentException(field + ".name: not a header name: " + name);
      }
      if (valueRegex == null || valueRegex.isEmpty()) {
        return new HeaderMatch(name, null);
      }
      return new HeaderMatch(name, Http.compileRegex(field + ".value", valueRegex));
    }
  }

  /**
   * The TCP check: connect, then optionally send {@code send} and expect a reply starting with
   * {@code expect} (UTF-8). Without {@code expect}, a connection (and the write of {@code send})
   * passes.
   */
  public record Tcp(String send, String expect) {
    public static final Tcp DEFAULT = new Tcp(null, null);

    public Tcp {
      send = send == null || send.isEmpty() ? null : send;
      expect = expect == null || expect.isEmpty() ? null : expect;
    }

    /** {@code expect} as UTF-8 bytes; empty without one. */
    public byte[] expectBytes() {
      return expect == null ? new byte[0] : expect.getBytes(StandardCharsets.UTF_8);
    }
  }

  /** The WebSocket check: the path of the upgrade request. */
  public record WebSocket(String path) {
    public static final WebSocket DEFAULT = new WebSocket("/");

    public WebSocket {
      path = path == null ? "/" : path;
      if (!path.startsWith("/") || Http.hasControl(path) || path.indexOf(' ') >= 0) {
        throw new IllegalArgumentException(
            "active.websocket.path: must start with / and contain no spaces or control characters");
      }
    }
  }

  /**
   * The gRPC check: {@code grpc.health.v1.Health/Check} for {@code service} ("" = server); with
   * {@code watch}, also a {@code Health/Watch} stream whose every status counts as a result at
   * once.
   */
  public record Grpc(String service, boolean watch) {
    public static final Grpc DEFAULT = new Grpc("");

    public Grpc(String service) {
      this(service, false);
    }

    public Grpc {
      service = service == null ? "" : service;
    }
  }

  /**
   * TLS settings.
   *
   * @param insecureSkipVerify accept any certificate and name (the handshake must still succeed)
   * @param serverName SNI name and the name the certificate must match; null = none sent, the
   *     certificate must match the Host (or the IP)
   * @param material the CA bundle to trust instead of the JVM's CAs, and a client certificate
   *     ({@link TlsMaterial#NONE}: neither)
   */
  public record Tls(boolean insecureSkipVerify, String serverName, TlsMaterial material) {
    /** Verify, no SNI override. For GRPC, TCP and WEBSOCKET it also means: plaintext. */
    public static final Tls NONE = new Tls(false, null);

    public Tls(boolean insecureSkipVerify, String serverName) {
      this(insecureSkipVerify, serverName, TlsMaterial.NONE);
    }

    public Tls {
      serverName = serverName == null || serverName.isEmpty() ? null : serverName;
      material = material == null ? TlsMaterial.NONE : material;
    }

    /** Whether a CA bundle or a client certificate comes with these settings. */
    public boolean hasMaterial() {
      return !material.equals(TlsMaterial.NONE);
    }
  }
}
