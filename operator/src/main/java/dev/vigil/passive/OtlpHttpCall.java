package dev.vigil.passive;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.rpc.Status;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.RequestHeaders;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * An OTLP/HTTP logs export ({@code POST /v1/logs}): the body is an {@code ExportLogsServiceRequest}
 * as protobuf ({@code application/x-protobuf}) or as OTLP/JSON ({@code application/json}:
 * protobuf's JSON mapping, read with {@code JsonFormat}, unknown fields ignored); the answer, and a
 * refusal's {@code google.rpc.Status}, come back in the request's encoding. The body may be
 * gzip-compressed ({@code Content-Encoding: gzip}, what Traefik's and the Collector's exporters
 * send); the body limit holds for it compressed and inflated. A refusal to retry is 429 or 503 with
 * Retry-After, as the OTLP specification asks.
 */
final class OtlpHttpCall implements OtlpCall {
  private final HttpServerRequest req;
  private final IntakeExchange.Shared shared;
  private final boolean json;
  private final boolean gzip;

  private OtlpHttpCall(
      HttpServerRequest req, IntakeExchange.Shared shared, boolean json, boolean gzip) {
    this.req = req;
    this.shared = shared;
    this.json = json;
    this.gzip = gzip;
  }

  /** The call, or null when the request was answered already (method, media type, size). */
  static OtlpHttpCall accept(HttpServerRequest req, IntakeExchange.Shared shared) {
    Boolean json = json(req.getHeader(HttpHeaders.CONTENT_TYPE));
    String encoding = req.getHeader(HttpHeaders.CONTENT_ENCODING);
    Boolean gzip = gzip(encoding);
    OtlpHttpCall call =
        new OtlpHttpCall(req, shared, Boolean.TRUE.equals(json), Boolean.TRUE.equals(gzip));
    if (req.method() != HttpMethod.POST) {
      req.response().putHeader(HttpHeaders.ALLOW, "POST");
      call.send(405, status(3, "use POST " + OtlpReceiver.HTTP_PATH));
      return null;
    }
    if (json == null) {
      call.send(
          415,
          status(3, "Content-Type must be application/x-protobuf or application/json (OTLP/HTTP)"));
      return null;
    }
    if (gzip == null) {
      call.send(
          415, status(3, "Content-Encoding must be gzip or identity, not '" + encoding + "'"));
      return null;
    }
    if (call.declaredBytes() > shared.limits().maxBodyBytes()) {
      call.refuse(Refusal.TOO_LARGE, tooLarge(shared), 0);
      return null;
    }
    return call;
  }

  /** True for OTLP/JSON, false for protobuf, null for anything else. */
  static Boolean json(String contentType) {
    if (contentType == null) {
      return null;
    }
    int semi = contentType.indexOf(';');
    String type =
        (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    return switch (type) {
      case "application/json" -> Boolean.TRUE;
      case "application/x-protobuf", "application/protobuf" -> Boolean.FALSE;
      default -> null;
    };
  }

  /** True for gzip, false for none or identity, null for any other Content-Encoding. */
  static Boolean gzip(String contentEncoding) {
    if (contentEncoding == null) {
      return Boolean.FALSE;
    }
    return switch (contentEncoding.trim().toLowerCase(Locale.ROOT)) {
      case "", "identity" -> Boolean.FALSE;
      case "gzip", "x-gzip" -> Boolean.TRUE;
      default -> null;
    };
  }

  @Override
  public String token() {
    return RequestHeaders.bearer(req.getHeader(HttpHeaders.AUTHORIZATION));
  }

  @Override
  public ClientCertificates.Verdict certificate() {
    return shared.certificate(req.connection());
  }

  @Override
  public String source() {
    return OutcomeIntake.source(req);
  }

  @Override
  public String profile() {
    return req.getHeader(OtlpReceiver.PROFILE_HEADER);
  }

  @Override
  public long declaredBytes() {
    return RequestHeaders.contentLength(req.getHeader(HttpHeaders.CONTENT_LENGTH));
  }

  @Override
  public void read(Handler<ExportLogsServiceRequest> then) {
    int max = shared.limits().maxBodyBytes();
    long declared = declaredBytes();
    Buffer body = Buffer.buffer((int) Math.min(declared >= 0 ? declared : max, 64 * 1024));
    req.handler(
        chunk -> {
          if (ended()) {
            return;
          }
          if (body.length() + chunk.length() > max) {
            refuse(Refusal.TOO_LARGE, tooLarge(shared), 0);
            return;
          }
          body.appendBuffer(chunk);
        });
    req.exceptionHandler(e -> {});
    req.endHandler(
        v -> {
          if (ended()) {
            return;
          }
          ExportLogsServiceRequest request = decoded(body.getBytes(), max);
          if (request != null) {
            then.handle(request);
          }
        });
    req.resume();
  }

  /** The body inflated and decoded, or null when it was refused here (not gzip, too large, bad). */
  private ExportLogsServiceRequest decoded(byte[] body, int max) {
    byte[] bytes;
    try {
      bytes = gzip ? GzipInflater.inflate(body, max) : body;
    } catch (IOException e) {
      refuse(Refusal.INVALID, "the body is not gzip (Content-Encoding): " + e.getMessage(), 0);
      return null;
    }
    if (bytes == null) {
      refuse(Refusal.TOO_LARGE, tooLarge(shared) + " (inflated)", 0);
      return null;
    }
    try {
      return decode(bytes);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      refuse(
          Refusal.INVALID,
          "the body is no ExportLogsServiceRequest ("
              + (json ? "OTLP/JSON" : "protobuf")
              + "): "
              + e.getMessage(),
          0);
      return null;
    }
  }

  private ExportLogsServiceRequest decode(byte[] body) throws InvalidProtocolBufferException {
    if (!json) {
      return ExportLogsServiceRequest.parseFrom(body);
    }
    ExportLogsServiceRequest.Builder b = ExportLogsServiceRequest.newBuilder();
    OtlpReceiver.JSON_IN.merge(new String(body, StandardCharsets.UTF_8), b);
    return b.build();
  }

  @Override
  public void answer(ExportLogsServiceResponse response) {
    send(200, response);
  }

  @Override
  public void refuse(Refusal refusal, String message, long retryAfterSeconds) {
    int code =
        switch (refusal) {
          case UNAUTHENTICATED -> 401;
          case INVALID -> 400;
          case TOO_LARGE -> 413;
          case THROTTLED -> 429;
          case BUSY -> 503;
        };
    if (refusal == Refusal.THROTTLED || refusal == Refusal.BUSY) {
      req.response()
          .putHeader(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, retryAfterSeconds)));
    }
    if (refusal == Refusal.UNAUTHENTICATED) {
      req.response().putHeader("WWW-Authenticate", "Bearer");
    }
    send(code, status(OtlpGrpcCall.grpcCode(refusal), message));
  }

  @Override
  public boolean ended() {
    return req.response().ended() || req.response().closed();
  }

  @Override
  public void onEnd(Runnable then) {
    req.response().endHandler(v -> then.run());
    req.response().closeHandler(v -> then.run());
  }

  private static Status status(int code, String message) {
    return Status.newBuilder().setCode(code).setMessage(message).build();
  }

  private void send(int code, Message body) {
    var response = req.response();
    if (response.ended() || response.closed()) {
      return;
    }
    shared.metrics().request(code);
    Buffer bytes;
    try {
      bytes =
          json
              ? Buffer.buffer(OtlpReceiver.JSON_OUT.print(body))
              : Buffer.buffer(body.toByteArray());
    } catch (InvalidProtocolBufferException e) {
      bytes = Buffer.buffer("{}");
    }
    shared.replies().end(req, code, json ? "application/json" : "application/x-protobuf", bytes);
  }

  private static String tooLarge(IntakeExchange.Shared shared) {
    return "the body is larger than "
        + shared.limits().maxBodyBytes()
        + " bytes; export smaller batches";
  }
}
