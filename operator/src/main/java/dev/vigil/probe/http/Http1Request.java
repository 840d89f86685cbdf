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
    CheckSpec.Http http = spec.http();
    String host = http.host() != null ? http.host() : hostHeader(target, spec);
    StringBuilder r = new StringBuilder(128);
    if (websocket) {
      r.append("GET ").append(spec.websocket().path());
    } else {
      r.append(http.method()).append(' ').append(http.path());
    }
    r.append(" HTTP/1.1\r\n");
    boolean userAgent = false;
    boolean hostSet = false;
    for (Map.Entry<String, String> h : http.headers().entrySet()) {
      userAgent |= h.getKey().equalsIgnoreCase("User-Agent");
      hostSet |= h.getKey().equalsIgnoreCase("Host");
    }
    if (!hostSet) {
      r.append("Host: ").append(host).append("\r\n");
    }
    if (!userAgent) {
      r.append("User-Agent: ").append(USER_AGENT).append("\r\n");
    }
    r.append("Accept: */*\r\n");
    if (websocket) {
      r.append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ")
          .append(websocketKey)
          .append("\r\nSec-WebSocket-Version: 13\r\n");
    } else if (!spec.reuseConnection()) {
      r.append("Connection: close\r\n");
    }
    if (http.body() != null && !websocket) {
      r.append("Content-Length: ")
          .append(http.body().getBytes(StandardCharsets.UTF_8).length)
          .append("\r\n");
    }
    for (Map.Entry<String, String> h : http.headers().entrySet()) {
      if (http.body() != null && !websocket && h.getKey().equalsIgnoreCase("Content-Length")) {
        continue; // the body's own length is sent
      }
      r.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
    }
    return r.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  private static String hostHeader(ProbeTarget target, CheckSpec spec) {
    String ip = target.ip().indexOf(':') >= 0 ? "[" + target.ip() + "]" : target.ip();
    int defaultPort = spec.usesTls() ? 443 : 80;
    return target.port() == defaultPort ? ip : ip + ":" + target.port();
  }
}
