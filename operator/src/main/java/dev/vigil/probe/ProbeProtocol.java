package dev.vigil.probe;

/** The protocol of an active check (docs/design.md §1 {@code active.protocol}). */
public enum ProbeProtocol {
  HTTP,
  HTTPS,
  TCP,
  GRPC,
  /** An HTTP/1.1 upgrade to WebSocket; TLS (wss) when {@code tls} is set. */
  WEBSOCKET
}
