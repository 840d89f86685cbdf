package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * The bytes of one HTTP/1.1 probe request: the check's method, path, Host (the Pod's address unless
 * set), User-Agent, {@code Connection: close} unless the connection is reused, the user's headers
 * and the body; or, for a WebSocket check, the upgrade request with its key. Pure.
 */
final class Http1Request {
  private static final String USER_AGENT = "vigil-probe";

  private Http1Request() {}

  /** The request: head, then the body if any (never on a WebSocket upgrade). */
  static byte[] bytes(ProbeTarget target, CheckSpec spec, String websocketKey) {
    boolean websocket = websocketKey != null;
    byte[] head = head(target, spec, websocketKey);
    byte[] body = websocket ? null : spec.http().bodyBytes();
    if (body == null) {
      return head;
    }
    byte[] request = Arrays.copyOf(head, head.length + body.length);
    System.arraycopy(body, 0, request, head.length, body.length);
    return request;
  }

  private static byte[] head(ProbeTarget target, CheckSpec spec, String websocketKey) {
    boolean websocket = websocketKey != null;
    StringBuilder r = new StringBuilder(128);
    requestLine(r, spec, websocket);
    defaultHeaders(r, target, spec);
    connectionHeaders(r, spec, websocketKey);
    checkHeaders(r, spec.http(), websocket);
    return r.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  private static void requestLine(StringBuilder r, CheckSpec spec, boolean websocket) {
    if (websocket) {
      r.append("GET ").append(spec.websocket().path());
    } else {
      r.append(spec.http().method()).append(' ').append(spec.http().path());
    }
    r.append(" HTTP/1.1\r\n");
  }

  /** Host and User-Agent where the check's own headers do not set them, and Accept. */
  private static void defaultHeaders(StringBuilder r, ProbeTarget target, CheckSpec spec) {
    CheckSpec.Http http = spec.http();
    boolean userAgent = false;
    boolean hostSet = false;
    for (String name : http.headers().keySet()) {
      userAgent |= name.equalsIgnoreCase("User-Agent");
      hostSet |= name.equalsIgnoreCase("Host");
    }
    if (!hostSet) {
      String host = http.host() != null ? http.host() : hostHeader(target, spec);
      r.append("Host: ").append(host).append("\r\n");
    }
    if (!userAgent) {
      r.append("User-Agent: ").append(USER_AGENT).append("\r\n");
    }
    r.append("Accept: */*\r\n");
  }

  /**
   * A WebSocket check's upgrade; otherwise {@code Connection: close} unless connections are kept.
   */
  private static void connectionHeaders(StringBuilder r, CheckSpec spec, String websocketKey) {
    if (websocketKey != null) {
      r.append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ")
          .append(websocketKey)
          .append("\r\nSec-WebSocket-Version: 13\r\n");
    } else if (!spec.reuseConnection()) {
      r.append("Connection: close\r\n");
    }
  }

  /**
   * The body's Content-Length, then the check's own headers (a Content-Length of theirs gives way).
   */
  private static void checkHeaders(StringBuilder r, CheckSpec.Http http, boolean websocket) {
    boolean body = http.body() != null && !websocket;
    if (body) {
      r.append("Content-Length: ")
          .append(http.body().getBytes(StandardCharsets.UTF_8).length)
          .append("\r\n");
    }
    for (Map.Entry<String, String> h : http.headers().entrySet()) {
      if (body && h.getKey().equalsIgnoreCase("Content-Length")) {
        continue; // the body's own length is sent
      }
      r.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
    }
  }

  private static String hostHeader(ProbeTarget target, CheckSpec spec) {
    String ip = target.ip().indexOf(':') >= 0 ? "[" + target.ip() + "]" : target.ip();
    int defaultPort = spec.usesTls() ? 443 : 80;
    return target.port() == defaultPort ? ip : ip + ":" + target.port();
  }
}
