package dev.vigil.passive;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.rpc.RetryInfo;
import com.google.rpc.Status;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.RequestHeaders;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.vertx.core.Handler;
import io.vertx.grpc.common.GrpcHeaderNames;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.GrpcServerRequest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * An OTLP/gRPC logs export ({@code LogsService/Export}, one request message). A refusal to retry is
 * {@code RESOURCE_EXHAUSTED} with a {@code google.rpc.RetryInfo} in the status details ({@code
 * grpc-status-details-bin}), or {@code UNAVAILABLE}: the codes OTLP exporters retry.
 */
final class OtlpGrpcCall implements OtlpCall {
  private final GrpcServerRequest<ExportLogsServiceRequest, ExportLogsServiceResponse> req;
  private final IntakeExchange.Shared shared;
  private final List<Runnable> onEnd = new ArrayList<>(1);
  private boolean ended;

  OtlpGrpcCall(
      GrpcServerRequest<ExportLogsServiceRequest, ExportLogsServiceResponse> req,
      IntakeExchange.Shared shared) {
    this.req = req;
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
    ExportLogsServiceRequest[] got = {null};
    req.handler(
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
          } else {
            then.handle(got[0]);
          }
        });
    req.resume();
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
    end();
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
