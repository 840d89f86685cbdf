package dev.vigil.passive;

import dev.vigil.security.ClientCertificates;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.vertx.core.Handler;

/**
 * One OTLP logs export as its transport carries it (OTLP/gRPC, OTLP/HTTP protobuf or JSON): what
 * {@link OtlpExport} needs to ask and to answer, each answer in the transport's own words
 * (docs/passive.md, "OTLP receiver": which status each refusal becomes).
 */
interface OtlpCall {
  /** Why an export is refused as a whole; nothing of it was applied. */
  enum Refusal {
    /** No token or client certificate, or neither accepted: HTTP 401, gRPC UNAUTHENTICATED. */
    UNAUTHENTICATED,
    /** A request that can never succeed as sent: HTTP 400, gRPC INVALID_ARGUMENT. */
    INVALID,
    /** Larger than the intake takes: HTTP 413, gRPC RESOURCE_EXHAUSTED without retry. */
    TOO_LARGE,
    /** The caller sends too much: HTTP 429 + Retry-After, gRPC RESOURCE_EXHAUSTED + RetryInfo. */
    THROTTLED,
    /** The intake is short of something now: HTTP 503 + Retry-After, gRPC UNAVAILABLE. */
    BUSY
  }

  /** The bearer token, or null. */
  String token();

  /** What the caller's client certificate says (nothing when the port asks for none). */
  ClientCertificates.Verdict certificate();

  /** The caller's IP address (what failed authentications are counted by). */
  String source();

  /** The profile the caller named ({@code x-vigil-profile}), or null. */
  String profile();

  /** The body's declared size, or -1 when unknown. */
  long declaredBytes();

  /**
   * Reads and decodes the export, then hands it to {@code then}; a body that is too large or does
   * not decode is answered here ({@link #refuse}) and {@code then} is not called.
   */
  void read(Handler<ExportLogsServiceRequest> then);

  /** Answers the export (with its partial success, if any). */
  void answer(ExportLogsServiceResponse response);

  /** Refuses the export; {@code retryAfterSeconds} for THROTTLED and BUSY. */
  void refuse(Refusal refusal, String message, long retryAfterSeconds);

  /** Whether the call was answered or its peer went away. */
  boolean ended();

  /** Runs {@code then} once the call ended (answered, reset, or closed). */
  void onEnd(Runnable then);
}
