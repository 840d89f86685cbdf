package dev.vigil.passive;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import com.google.rpc.Status;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.RequestHeaders;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.grpc.common.GrpcHeaderNames;
import io.vertx.grpc.common.GrpcMessage;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.WireFormat;
import io.vertx.grpc.server.GrpcServerRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * An OTLP/gRPC logs export ({@code LogsService/Export}, one request message, uncompressed or gzip
 * as Traefik's exporter sends it: inflated here under the body limit, never by Vert.x's own
 * unbounded decoder). A refusal to retry is {@code RESOURCE_EXHAUSTED} with a {@code
 * google.rpc.RetryInfo} in the status details ({@code grpc-status-details-bin}), or {@code
 * UNAVAILABLE}: the codes OTLP exporters retry.
 *
 * <p>The body is read only once the export holds its share of the bytes in flight: the HTTP/2
 * stream stays paused until {@link #read}. An export answered before its body was read (a refusal)
 * has the rest of its body read and dropped, not assembled: what the paused stream held, and what
 * the caller still sends, go back to the connection's flow-control window at once, so the caller's
 * admitted exports on the same connection keep their share of it.
 */
final class OtlpGrpcCall implements OtlpCall {
  private final GrpcServerRequest<ExportLogsServiceRequest, ExportLogsServiceResponse> req;
  private final HttpServerRequest http;
  private final IntakeExchange.Shared shared;
  private final List<Runnable> onEnd = new ArrayList<>(1);
  private boolean ended;

  OtlpGrpcCall(
      GrpcServerRequest<ExportLogsServiceRequest, ExportLogsServiceResponse> req,
      HttpServerRequest http,
      IntakeExchange.Shared shared) {
    this.req = req;
    this.http = java.util.Objects.requireNonNull(http, "the export's HTTP request");
    this.shared = shared;
    req.pause();
    req.exceptionHandler(e -> end());
  }

  /** The gRPC status code of a refusal. */
  static int grpcCode(Refusal refusal) {
    return grpcStatus(refusal).code;
  }

  private static GrpcStatus grpcStatus(Refusal refusal) {
    return switch (refusal) {
      case UNAUTHENTICATED -> GrpcStatus.UNAUTHENTICATED;
      case INVALID -> GrpcStatus.INVALID_ARGUMENT;
      case TOO_LARGE, THROTTLED -> GrpcStatus.RESOURCE_EXHAUSTED;
      case BUSY -> GrpcStatus.UNAVAILABLE;
    };
  }

  @Override
  public String token() {
    return RequestHeaders.bearer(req.headers().get("authorization"));
  }

  @Override
  public ClientCertificates.Verdict certificate() {
    return shared.certificate(req.connection());
  }

  @Override
  public String source() {
    var address = req.connection().remoteAddress();
    return address == null || address.hostAddress() == null ? "" : address.hostAddress();
  }

  @Override
  public String profile() {
    return req.headers().get(OtlpReceiver.PROFILE_HEADER);
  }

  @Override
  public long declaredBytes() {
    return -1;
  }

  @Override
  public void read(Handler<ExportLogsServiceRequest> then) {
    GrpcMessage[] got = {null};
    req.messageHandler(
        m -> {
          if (got[0] == null) {
            got[0] = m;
          }
        });
    req.endHandler(
        v -> {
          if (ended) {
            return;
          }
          if (got[0] == null) {
            refuse(Refusal.INVALID, "no ExportLogsServiceRequest was sent", 0);
            return;
          }
          ExportLogsServiceRequest request = decoded(got[0]);
          if (request != null) {
            then.handle(request);
          }
        });
    req.resume();
    http.resume();
  }

  /** The message inflated and decoded, or null when it was refused here. */
  private ExportLogsServiceRequest decoded(GrpcMessage message) {
    int max = shared.limits().maxBodyBytes();
    byte[] bytes = message.payload().getBytes();
    String encoding = message.encoding();
    try {
      if ("gzip".equalsIgnoreCase(encoding)) {
        bytes = GzipInflater.inflate(bytes, max);
      } else if (encoding != null && !"identity".equalsIgnoreCase(encoding)) {
        refuse(Refusal.INVALID, "grpc-encoding must be gzip or identity, not " + encoding, 0);
        return null;
      }
    } catch (IOException e) {
      refuse(Refusal.INVALID, "the message is not gzip (grpc-encoding): " + e.getMessage(), 0);
      return null;
    }
    if (bytes == null) {
      refuse(
          Refusal.TOO_LARGE,
          "the message inflates past " + max + " bytes; export smaller batches",
          0);
      return null;
    }
    try {
      if (message.format() == WireFormat.JSON) { // application/grpc+json
        ExportLogsServiceRequest.Builder b = ExportLogsServiceRequest.newBuilder();
        OtlpReceiver.JSON_IN.merge(new String(bytes, StandardCharsets.UTF_8), b);
        return b.build();
      }
      return ExportLogsServiceRequest.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      refuse(Refusal.INVALID, "the message is no ExportLogsServiceRequest: " + e.getMessage(), 0);
      return null;
    }
  }

  @Override
  public void answer(ExportLogsServiceResponse response) {
    if (ended) {
      return;
    }
    shared.metrics().request(200);
    req.response().send(response);
    end();
  }

  @Override
  public void refuse(Refusal refusal, String message, long retryAfterSeconds) {
    if (ended) {
      return;
    }
    GrpcStatus status = grpcStatus(refusal);
    var response = req.response();
    response.status(status).statusMessage(message);
    if (refusal == Refusal.THROTTLED) {
      Status details =
          Status.newBuilder()
              .setCode(status.code)
              .setMessage(message)
              .addDetails(
                  Any.pack(
                      RetryInfo.newBuilder()
                          .setRetryDelay(
                              Duration.newBuilder().setSeconds(Math.max(1, retryAfterSeconds)))
                          .build()))
              .build();
      response
          .trailers()
          .set(
              GrpcHeaderNames.GRPC_STATUS_DETAILS_BIN,
              Base64.getEncoder().withoutPadding().encodeToString(details.toByteArray()));
    }
    shared.metrics().request(refusal == Refusal.THROTTLED ? 429 : 400);
    response.end();
    dropRest();
    end();
  }

  /**
   * A body not read yet is not wanted: it is read and dropped. Left paused, it would hold the
   * connection's window (and starve the caller's admitted exports behind it); reset, the caller's
   * gRPC client may report the refusal as a reset instead of its status.
   */
  private void dropRest() {
    if (!http.isEnded()) {
      http.handler(chunk -> {});
      http.resume();
    }
  }

  @Override
  public boolean ended() {
    return ended;
  }

  @Override
  public void onEnd(Runnable then) {
    if (ended) {
      then.run();
    } else {
      onEnd.add(then);
    }
  }

  private void end() {
    if (ended) {
      return;
    }
    ended = true;
    for (Runnable r : onEnd) {
      r.run();
    }
    onEnd.clear();
  }
}
