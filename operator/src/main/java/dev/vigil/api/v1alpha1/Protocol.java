package dev.vigil.api.v1alpha1;

/** Protocol of an active probe. */
public enum Protocol {
  HTTP,
  HTTPS,
  TCP,
  GRPC,
  /** An HTTP/1.1 upgrade to WebSocket (wss with {@code tls}). */
  @com.fasterxml.jackson.annotation.JsonProperty("WebSocket")
  WEBSOCKET
}
