package dev.vigil.passive;

import static dev.vigil.passive.OtlpClients.traefik;
import static dev.vigil.passive.OtlpClients.traefikExport;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.vertx.core.Vertx;
import io.vertx.grpc.common.GrpcStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OTLP logs receiver on the real {@link OutcomeIntake} over TLS on loopback: OTLP/gRPC
 * (Vert.x's gRPC client, HTTP/2 through ALPN on the intake's own port) and OTLP/HTTP in protobuf
 * and JSON, tokens reviewed by a {@link FakeReviewer}.
 */
class OtlpReceiverTest {
  static final String TOKEN = "traefik-token";
  static final PoolKey WEB = new PoolKey("shop", "web");
  static final String BACKEND = IntakeHarness.ip(0) + ":8080";
  static final IntakeLimits LIMITS = IntakeLimits.defaults().withMaxBodyBytes(64 * 1024);

  private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());
  private Vertx vertx;
  private SimpleMeterRegistry meters;
  private IntakeHarness harness;
  private PoolRuntime web;
  private OtlpClients clients;

  @BeforeEach
  void setUp() {
    start(LIMITS);
  }

  void start(IntakeLimits limits) {
    vertx = Vertx.vertx();
    meters = new SimpleMeterRegistry();
    harness = new IntakeHarness(vertx, meters, limits, clock::get);
    harness.reviewer.user(TOKEN, "system:serviceaccount:ingress:traefik", "shop");
    web =
        harness.pool(WEB, 3, HealthSettings.defaults().toBuilder().maxEjectionPercent(50).build());
    BackendAddresses addresses = new BackendAddresses();
    addresses.replace(WEB, members(IntakeHarness.ip(0), IntakeHarness.ip(1), IntakeHarness.ip(2)));
    addresses.replace(new PoolKey("shop", "secret"), members("10.7.0.1"));
    addresses.replace(new PoolKey("shop", "away"), members("10.8.0.1"));
    harness.intake.receiveOtlp(addresses, List.of(OtlpProfile.TRAEFIK, OtlpProfile.ENVOY));
    clients = new OtlpClients(vertx, harness.port);
  }

  @AfterEach
  void tearDown() {
    clients.close();
    harness.close();
    vertx.close();
  }

  static List<Member> members(String... ips) {
    List<Member> out = new ArrayList<>();
    for (String ip : ips) {
      out.add(Member.of("pod-" + ip, "uid-" + ip, ip, 8080, "n", "z", false, false, List.of(8080)));
    }
    return out;
  }

  static List<LogRecord> failures(String address, int n) {
    return Collections.nCopies(n, traefik(address, 500, 500));
  }

  BackendView backend(int i) {
    return IntakeHarness.state(web).get(i);
  }

  @Test
  void grpcExportOfTraefikRecordsEjectsTheBackend() {
    var answer = clients.grpc(TOKEN, null, traefikExport(failures(BACKEND, 5)));

    assertThat(answer.status()).isEqualTo(GrpcStatus.OK);
    assertThat(answer.response().hasPartialSuccess()).isFalse();
    assertThat(backend(0).ejected()).isTrue();
    assertThat(backend(1).ejected()).isFalse();
  }

  @Test
  void httpProtobufExportAppliesAndCountsWhatWasNotApplied() throws Exception {
    List<LogRecord> records = new ArrayList<>(failures(BACKEND, 2));
    records.add(traefik("10.99.0.1:8080", 500, 500)); // no backend
    records.add(traefik("10.7.0.1:8080", 500, 500)); // shop/secret: forbidden
    records.add(traefik("10.8.0.1:8080", 500, 500)); // shop/away: not run here
    records.add(LogRecord.newBuilder().build()); // no address

    var r =
        clients.http(TOKEN, "application/x-protobuf", traefikExport(records).toByteArray(), null);

    assertThat(r.statusCode()).isEqualTo(200);
    ExportLogsServiceResponse answer = OtlpClients.protobufAnswer(r);
    assertThat(answer.getPartialSuccess().getRejectedLogRecords()).isEqualTo(4);
    assertThat(answer.getPartialSuccess().getErrorMessage())
        .contains("not_a_backend=1", "forbidden=1", "not_here=1", "no_address=1");
    assertThat(backend(0).upstreamErrors()).isEqualTo(2);
    assertThat(
            meters
                .get("vigil_otlp_records_dropped_total")
                .tag("reason", "not_a_backend")
                .counter()
                .count())
        .isEqualTo(1.0);
  }

  @Test
  void httpJsonExportInOtlpJsonIsApplied() throws Exception {
    // OTLP/JSON as the spec writes it: hex trace ids, 64-bit integers as strings, camelCase keys
    String record =
        """
        {"timeUnixNano":"1700000000000000000","traceId":"5b8efff798038103d269b633813fc60c",
         "spanId":"eee19b7ec3c1b174","severityNumber":9,"body":{"stringValue":"GET /"},
         "attributes":[{"key":"ServiceAddr","value":{"stringValue":"%s"}},
                       {"key":"OriginStatus","value":{"intValue":"503"}},
                       {"key":"DownstreamStatus","value":{"intValue":"503"}},
                       {"key":"OriginDuration","value":{"intValue":"1500000"}}]}"""
            .formatted(BACKEND);
    String body =
        """
        {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"traefik"}}]},
          "scopeLogs":[{"scope":{"name":"traefik"},"logRecords":[%s,%s,%s]}]}]}"""
            .formatted(record, record, record);

    var r = clients.http(TOKEN, "application/json", body.getBytes(StandardCharsets.UTF_8), null);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(new String(r.body(), StandardCharsets.UTF_8)).doesNotContain("rejected");
    assertThat(backend(0).upstreamErrors()).isEqualTo(3);
  }

  @Test
  void httpGzipExportAsTraefikSendsItIsApplied() throws Exception {
    // Traefik's OTLP/HTTP log exporter always compresses (otlploghttp.WithCompression(Gzip))
    byte[] body = OtlpClients.gzip(traefikExport(failures(BACKEND, 5)).toByteArray());

    var r = clients.http(TOKEN, "application/x-protobuf", "gzip", body, null);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(OtlpClients.protobufAnswer(r).hasPartialSuccess()).isFalse();
    assertThat(backend(0).ejected()).isTrue();
  }

  @Test
  void grpcGzipMessagesAsTraefikSendsThemAreAppliedAndBoundedInflated() {
    // Traefik's OTLP/gRPC log exporter always compresses (otlploggrpc.WithCompressor(gzip.Name))
    var applied = clients.grpc(TOKEN, null, traefikExport(failures(BACKEND, 5)), "gzip");
    ExportLogsServiceRequest big = traefikExport(failures(IntakeHarness.ip(1) + ":8080", 1_000));
    assertThat(OtlpClients.gzip(big.toByteArray()).length).isLessThan(LIMITS.maxBodyBytes());
    var inflated = clients.grpc(TOKEN, null, big, "gzip");

    assertThat(applied.status()).isEqualTo(GrpcStatus.OK);
    assertThat(backend(0).ejected()).isTrue();
    assertThat(inflated.status()).isEqualTo(GrpcStatus.RESOURCE_EXHAUSTED);
    assertThat(inflated.message()).contains("inflates past");
    assertThat(inflated.retrySeconds()).isEqualTo(-1);
    assertThat(backend(1).upstreamErrors()).isZero();
  }

  @Test
  void aGzipBodyIsBoundedInflatedAndOtherEncodingsAreRefusedNamingThem() throws Exception {
    byte[] big = traefikExport(failures(BACKEND, 1_000)).toByteArray();
    byte[] bomb = OtlpClients.gzip(big);
    assertThat(big.length).isGreaterThan(LIMITS.maxBodyBytes());
    assertThat(bomb.length).isLessThan(LIMITS.maxBodyBytes());

    var inflated = clients.http(TOKEN, "application/x-protobuf", "gzip", bomb, null);
    var notGzip = clients.http(TOKEN, "application/x-protobuf", "gzip", new byte[] {1, 2, 3}, null);
    var brotli = clients.http(TOKEN, "application/x-protobuf", "br", bomb, null);

    assertThat(inflated.statusCode()).isEqualTo(413);
    assertThat(notGzip.statusCode()).isEqualTo(400);
    assertThat(brotli.statusCode()).isEqualTo(415);
    assertThat(com.google.rpc.Status.parseFrom(brotli.body()).getMessage())
        .contains("Content-Encoding", "gzip", "br");
    assertThat(backend(0).upstreamErrors()).isZero();
  }

  @Test
  void unauthenticatedExportsChangeNothing() throws Exception {
    ExportLogsServiceRequest export = traefikExport(failures(BACKEND, 5));

    var none = clients.grpc(null, null, export);
    var bad = clients.grpc("made-up", null, export);
    var http = clients.http("made-up", "application/x-protobuf", export.toByteArray(), null);

    assertThat(none.status()).isEqualTo(GrpcStatus.UNAUTHENTICATED);
    assertThat(bad.status()).isEqualTo(GrpcStatus.UNAUTHENTICATED);
    assertThat(http.statusCode()).isEqualTo(401);
    assertThat(backend(0).upstreamErrors()).isZero();
    assertThat(harness.reviewer.accessReviews.get()).isZero();
  }

  @Test
  void anUnknownProfileIsRefusedNamingTheHeader() {
    var answer = clients.grpc(TOKEN, "nginx", traefikExport(failures(BACKEND, 1)));

    assertThat(answer.status()).isEqualTo(GrpcStatus.INVALID_ARGUMENT);
    assertThat(answer.message()).contains("x-vigil-profile", "nginx", "traefik");
  }

  @Test
  void tooLargeAnExportIsRefusedWithoutRetry() throws Exception {
    ExportLogsServiceRequest big = traefikExport(failures(BACKEND, 1_000));
    assertThat(big.getSerializedSize()).isGreaterThan(LIMITS.maxBodyBytes());

    var http = clients.http(TOKEN, "application/x-protobuf", big.toByteArray(), null);
    var grpc = clients.grpc(TOKEN, null, big);

    assertThat(http.statusCode()).isEqualTo(413);
    assertThat(grpc.status()).isEqualTo(GrpcStatus.RESOURCE_EXHAUSTED);
    assertThat(grpc.retrySeconds()).isEqualTo(-1);
    assertThat(backend(0).upstreamErrors()).isZero();
  }

  @Test
  void aCallerOverItsRateIsToldWhenToRetry() throws Exception {
    tearDown();
    start(LIMITS.withRate(0.1, 1));
    ExportLogsServiceRequest export = traefikExport(failures(BACKEND, 1));

    var first = clients.grpc(TOKEN, null, export);
    var second = clients.grpc(TOKEN, null, export);
    var third = clients.http(TOKEN, "application/x-protobuf", export.toByteArray(), null);

    assertThat(first.status()).isEqualTo(GrpcStatus.OK);
    assertThat(second.status()).isEqualTo(GrpcStatus.RESOURCE_EXHAUSTED);
    assertThat(second.retrySeconds()).isBetween(1L, 10L);
    assertThat(third.statusCode()).isEqualTo(429);
    assertThat(third.headers().firstValue("Retry-After")).isPresent();
    assertThat(backend(0).upstreamErrors()).isEqualTo(1);
  }
}
