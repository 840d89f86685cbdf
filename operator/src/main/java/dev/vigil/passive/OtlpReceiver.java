package dev.vigil.passive;

import com.google.protobuf.util.JsonFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerOptions;
import java.util.EnumMap;
import java.util.Map;

/**
 * The OTLP logs receiver on the outcome intake's TLS port (docs/passive.md, "OTLP receiver"):
 * OTLP/gRPC {@code opentelemetry.proto.collector.logs.v1.LogsService/Export} (a Vert.x {@link
 * GrpcServer} serving requests of the intake's own HttpServer: HTTP/2 through ALPN) and OTLP/HTTP
 * {@code POST /v1/logs} ({@code application/x-protobuf} or {@code application/json}). Each export
 * is an {@link OtlpExport}: the intake's reviews, rates, bytes, queues and deadline, records mapped
 * to pools by {@link OtlpRecords}.
 */
public final class OtlpReceiver {
  /** OTLP/HTTP's logs path. */
  public static final String HTTP_PATH = "/v1/logs";

  /** OTLP/gRPC's logs service. */
  public static final ServiceName SERVICE =
      ServiceName.create("opentelemetry.proto.collector.logs.v1.LogsService");

  /** The gRPC method's path. */
  public static final String GRPC_PATH = "/" + SERVICE.fullyQualifiedName() + "/Export";

  /** The header (HTTP) or metadata key (gRPC) that names the profile of an export's records. */
  public static final String PROFILE_HEADER = "x-vigil-profile";

  static final ServiceMethod<ExportLogsServiceRequest, ExportLogsServiceResponse> EXPORT =
      ServiceMethod.server(
          SERVICE,
          "Export",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(ExportLogsServiceRequest.newBuilder()));

  static final JsonFormat.Parser JSON_IN = JsonFormat.parser().ignoringUnknownFields();
  static final JsonFormat.Printer JSON_OUT = JsonFormat.printer().omittingInsignificantWhitespace();

  private final IntakeExchange.Shared shared;
  private final OtlpRecords records;
  private final Counter received;
  private final Map<OtlpDrop, Counter> dropped = new EnumMap<>(OtlpDrop.class);
  private final GrpcServer grpc;

  /**
   * The HTTP request the gRPC server is taking on this thread: Vert.x runs the call handler inside
   * {@code grpc.handle} (it dispatches in place), and the call takes its HTTP request from here.
   */
  private final ThreadLocal<HttpServerRequest> handing = new ThreadLocal<>();

  OtlpReceiver(IntakeExchange.Shared shared, OtlpRecords records, MeterRegistry meters) {
    this.shared = shared;
    this.records = records;
    this.received =
        Counter.builder("vigil_otlp_records_received_total")
            .description("OTLP log records received from authenticated callers")
            .register(meters);
    for (OtlpDrop reason : OtlpDrop.values()) {
      dropped.put(
          reason,
          Counter.builder("vigil_otlp_records_dropped_total")
              .description("OTLP log records not applied, by reason")
              .tag("reason", reason.tag())
              .register(meters));
    }
    this.grpc =
        GrpcServer.server(
            shared.vertx(),
            new GrpcServerOptions()
                .setMaxMessageSize(shared.limits().maxBodyBytes())
                .setScheduleDeadlineAutomatically(true));
    grpc.callHandler(
        EXPORT,
        req -> {
          HttpServerRequest http = handing.get();
          handing.remove();
          new OtlpExport(
                  this, new OtlpGrpcCall(req, http, shared), shared.vertx().getOrCreateContext())
              .start();
        });
  }

  /**
   * The handler of {@link #GRPC_PATH}: the gRPC server. The intake pauses every request it routes,
   * and the HTTP/2 stream stays paused until the export holds its share of the bytes in flight
   * ({@link OtlpGrpcCall#read}): a paused gRPC request only stops handing out messages, while the
   * stream under it keeps reading the body into the message being assembled (up to the 4 MiB
   * message limit, per stream, before the caller was admitted). Paused, the stream holds at most
   * what HTTP/2 flow control lets the caller send unasked: 64 KiB per connection. A request the
   * gRPC server answered itself (not an export) is resumed here, so its body is drained.
   */
  public Handler<HttpServerRequest> grpc() {
    return req -> {
      handing.set(req);
      try {
        grpc.handle(req);
      } finally {
        if (handing.get() != null) { // no call was made of it
          handing.remove();
          req.resume();
        }
      }
    };
  }

  /** The handler of {@link #HTTP_PATH}. */
  public Handler<HttpServerRequest> http() {
    return req -> {
      OtlpHttpCall call = OtlpHttpCall.accept(req, shared);
      if (call != null) {
        new OtlpExport(this, call, shared.vertx().getOrCreateContext()).start();
      }
    };
  }

  IntakeExchange.Shared shared() {
    return shared;
  }

  OtlpRecords records() {
    return records;
  }

  /** Counts an export's records and what was dropped of them. */
  void counted(int n, Map<OtlpDrop, Integer> drops) {
    received.increment(n);
    drops.forEach((reason, count) -> dropped.get(reason).increment(count));
  }
}
