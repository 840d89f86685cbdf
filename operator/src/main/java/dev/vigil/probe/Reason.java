package dev.vigil.probe;

/** Why a probe passed or failed: a small closed set, stable enough for metrics and events. */
public enum Reason {
  /** The check passed. */
  OK,
  /** No complete answer before the deadline (connect, TLS handshake or response). */
  TIMEOUT,
  /** The backend refused the connection (nothing listens on the port). */
  CONNECTION_REFUSED,
  /** The backend reset the connection. */
  CONNECTION_RESET,
  /** The backend closed the connection before a complete answer. */
  CONNECTION_CLOSED,
  /** Any other transport failure (unreachable host, local resource exhaustion, ...). */
  CONNECTION_ERROR,
  /** The TLS handshake failed (untrusted certificate, wrong name, protocol mismatch). */
  TLS,
  /**
   * The server's certificate does not chain to a trusted CA (with {@code tls.caBundle}: to one of
   * the bundle's): "certificate signed by unknown authority".
   */
  TLS_UNKNOWN_CA,
  /**
   * The server demands a client certificate (mTLS) and the probe sent none, or one it does not
   * accept.
   */
  TLS_CLIENT_CERTIFICATE,
  /** HTTP: a well-formed status code that is not among the expected statuses. */
  STATUS,
  /**
   * HTTP: a status among {@code failFastStatuses}: a failure that takes an Up backend Down at once
   * (docs/design.md §2.2).
   */
  FAIL_FAST_STATUS,
  /** HTTP/2: the server reset the probe's stream (RST_STREAM) before a verdict. */
  STREAM_RESET,
  /** HTTP: a response header of {@code headerMatch} is missing or its value does not match. */
  HEADER_MISMATCH,
  /** HTTP: the first 64 KiB of the body do not match {@code bodyMatch}. */
  BODY_MISMATCH,
  /** HTTP: the response is not HTTP/1.x (bad status line, oversized or broken headers). */
  MALFORMED_RESPONSE,
  /**
   * WebSocket: the upgrade was answered 101 without {@code Upgrade: websocket} or without the
   * {@code Sec-WebSocket-Accept} derived from the probe's key.
   */
  WEBSOCKET_HANDSHAKE,
  /** TCP: the reply does not start with {@code expect}. */
  EXPECT_MISMATCH,
  /** gRPC: the health service answered NOT_SERVING. */
  GRPC_NOT_SERVING,
  /** gRPC: the health service answered UNKNOWN. */
  GRPC_UNKNOWN,
  /** gRPC: the health service does not know the service name (SERVICE_UNKNOWN or NOT_FOUND). */
  GRPC_SERVICE_UNKNOWN,
  /** gRPC: the server does not implement grpc.health.v1.Health. */
  GRPC_UNIMPLEMENTED,
  /** gRPC: the call ended with another non-OK gRPC status. */
  GRPC_STATUS,
  /** gRPC: the peer does not speak gRPC (HTTP/1 server, non-gRPC HTTP/2 answer). */
  GRPC_PROTOCOL,
  /** A defect in the prober itself; never expected, reported rather than thrown. */
  INTERNAL
}
