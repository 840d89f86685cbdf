package dev.vigil.passive;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import com.google.rpc.Status;
import dev.vigil.testing.PresentedCertificate;
import dev.vigil.testing.TestTls;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.resource.v1.Resource;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.ServiceMethod;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/** OTLP exporters for tests: OTLP/gRPC through Vert.x's gRPC client, OTLP/HTTP, and records. */
final class OtlpClients implements AutoCloseable {
  static final ServiceMethod<ExportLogsServiceResponse, ExportLogsServiceRequest> EXPORT =
      ServiceMethod.client(
          OtlpReceiver.SERVICE,
          "Export",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(ExportLogsServiceResponse.newBuilder()));

  /** A gRPC answer: its status, message, the response (OK only) and the RetryInfo's delay. */
  record GrpcAnswer(
      GrpcStatus status, String message, ExportLogsServiceResponse response, long retrySeconds) {}

  private final Vertx vertx;
  private final int port;
  private final GrpcClient grpc;
  private final HttpClient http;

  OtlpClients(Vertx vertx, int port) {
    this(vertx, port, null);
  }

  /** Clients that present {@code certificate} when the server asks for one (null: none). */
  OtlpClients(Vertx vertx, int port, PresentedCertificate certificate) {
    this.vertx = vertx;
    this.port = port;
    HttpClientOptions options =
        new HttpClientOptions()
            .setSsl(true)
            .setUseAlpn(true)
            .setProtocolVersion(HttpVersion.HTTP_2)
            .setTrustOptions(new PemTrustOptions().addCertPath(TestTls.caFile().toString()));
    if (certificate != null) {
      options.setKeyCertOptions(certificate.keyCertOptions());
    }
    this.grpc = GrpcClient.client(vertx, options);
    this.http = certificate == null ? TestTls.client() : certificate.httpClient();
  }

  /** The OTLP/HTTP client, for the JSON intake on the same port. */
  HttpClient httpClient() {
    return http;
  }

  /** One OTLP/gRPC export over TLS; token and profile may be null. */
  GrpcAnswer grpc(String token, String profile, ExportLogsServiceRequest request) {
    return grpc(token, profile, request, null);
  }

  /**
   * As {@link #grpc(String, String, ExportLogsServiceRequest)}, the message compressed with {@code
   * encoding} ({@code gzip}, as Traefik's exporter sends it; null: none).
   */
  GrpcAnswer grpc(String token, String profile, ExportLogsServiceRequest request, String encoding) {
    Future<GrpcAnswer> answer =
        grpc.request(SocketAddress.inetSocketAddress(port, "127.0.0.1"), EXPORT)
            .compose(
                req -> {
                  if (token != null) {
                    req.headers().set("authorization", "Bearer " + token);
                  }
                  if (profile != null) {
                    req.headers().set(OtlpReceiver.PROFILE_HEADER, profile);
                  }
                  if (encoding != null) {
                    req.encoding(encoding);
                  }
                  req.end(request);
                  return req.response();
                })
            .compose(
                resp -> {
                  ExportLogsServiceResponse[] got = {null};
                  resp.handler(m -> got[0] = m);
                  return resp.end()
                      .map(v -> new GrpcAnswer(resp.status(), resp.statusMessage(), got[0], -1))
                      .recover(
                          e ->
                              Future.succeededFuture(
                                  new GrpcAnswer(
                                      resp.status(),
                                      resp.statusMessage(),
                                      null,
                                      retrySeconds(
                                          resp.trailers().get("grpc-status-details-bin"),
                                          resp.headers().get("grpc-status-details-bin")))));
                });
    return IntakeHarness.await(answer);
  }

  private static long retrySeconds(String trailer, String header) {
    String bin = trailer != null ? trailer : header;
    if (bin == null) {
      return -1;
    }
    try {
      Status status = Status.parseFrom(Base64.getDecoder().decode(bin));
      for (var any : status.getDetailsList()) {
        if (any.is(RetryInfo.class)) {
          return any.unpack(RetryInfo.class).getRetryDelay().getSeconds();
        }
      }
      return -1;
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  /** One OTLP/HTTP export ({@code POST /v1/logs}) over TLS. */
  HttpResponse<byte[]> http(String token, String contentType, byte[] body, String profile)
      throws Exception {
    return http(token, contentType, null, body, profile);
  }

  /** As {@link #http(String, String, byte[], String)}, with a Content-Encoding (null: none). */
  HttpResponse<byte[]> http(
      String token, String contentType, String contentEncoding, byte[] body, String profile)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + OtlpReceiver.HTTP_PATH))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentEncoding != null) {
      b.header("Content-Encoding", contentEncoding);
    }
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    if (profile != null) {
      b.header(OtlpReceiver.PROFILE_HEADER, profile);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** {@code body} gzip-compressed, as Traefik's and the Collector's OTLP/HTTP exporters send it. */
  static byte[] gzip(byte[] body) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (java.util.zip.GZIPOutputStream gz = new java.util.zip.GZIPOutputStream(out)) {
      gz.write(body);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static ExportLogsServiceResponse protobufAnswer(HttpResponse<byte[]> r) throws Exception {
    return ExportLogsServiceResponse.parseFrom(r.body());
  }

  // ---- records ----

  static KeyValue attr(String key, String value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setStringValue(value))
        .build();
  }

  static KeyValue attr(String key, long value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setIntValue(value))
        .build();
  }

  /**
   * A Traefik v3 access-log record as its otellogrus hook sends it (pkg/middlewares/accesslog:
   * logrus fields become attributes; durations are nanoseconds).
   */
  static LogRecord traefik(String serviceAddr, int originStatus, int downstreamStatus) {
    LogRecord.Builder b =
        LogRecord.newBuilder()
            .setSeverityText("info")
            .addAttributes(attr("RouterName", "web@kubernetes"))
            .addAttributes(attr("ServiceName", "shop-web-80@kubernetes"))
            .addAttributes(attr("ServiceAddr", serviceAddr))
            .addAttributes(attr("ServiceURL", "http://" + serviceAddr))
            .addAttributes(attr("DownstreamStatus", downstreamStatus))
            .addAttributes(attr("Duration", 2_500_000L))
            .addAttributes(attr("RequestMethod", "GET"))
            .addAttributes(attr("RequestPath", "/"));
    if (originStatus > 0) {
      b.addAttributes(attr("OriginStatus", originStatus))
          .addAttributes(attr("OriginDuration", 2_000_000L));
    }
    return b.build();
  }

  static ExportLogsServiceRequest export(Map<String, String> resource, List<LogRecord> records) {
    Resource.Builder r = Resource.newBuilder();
    resource.forEach((k, v) -> r.addAttributes(attr(k, v)));
    return ExportLogsServiceRequest.newBuilder()
        .addResourceLogs(
            ResourceLogs.newBuilder()
                .setResource(r)
                .addScopeLogs(ScopeLogs.newBuilder().addAllLogRecords(records)))
        .build();
  }

  static ExportLogsServiceRequest traefikExport(List<LogRecord> records) {
    return export(Map.of("service.name", "traefik"), records);
  }

  @Override
  public void close() {
    IntakeHarness.await(grpc.close());
  }
}
