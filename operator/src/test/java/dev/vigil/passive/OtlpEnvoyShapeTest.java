package dev.vigil.passive;

import static dev.vigil.passive.OtlpClients.attr;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.vertx.core.Vertx;
import io.vertx.grpc.common.GrpcStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * OTLP exactly as Envoy's OpenTelemetry access logger ({@code envoy.access_loggers.open_telemetry})
 * builds it, sent over OTLP/gRPC to the real intake, and the local-origin split Envoy's outlier
 * detector makes: connect failures, timeouts and resets (UF, UT, UC, UR, LR) count as local-origin
 * errors, a 5xx the host answered as an upstream error.
 *
 * <p>The shape, from Envoy's documentation
 * (https://www.envoyproxy.io/docs/envoy/latest/api-v3/extensions/access_loggers/open_telemetry/v3/logs_service.proto):
 * the resource carries the built-in labels {@code log_name}, {@code zone_name}, {@code
 * cluster_name} and {@code node_name} (unless {@code disable_builtin_labels}); the log record's
 * {@code body} and {@code attributes} are the {@code AnyValue}/{@code KeyValueList} the user
 * configures, every command operator rendered as a string value: here the attribute block
 * docs/reporters.md asks for ({@code upstream_host: "%UPSTREAM_HOST%"}, {@code response_code:
 * "%RESPONSE_CODE%"}, {@code response_flags: "%RESPONSE_FLAGS%"}, {@code duration: "%DURATION%"}),
 * with the values the command operators produce
 * (https://www.envoyproxy.io/docs/envoy/latest/configuration/observability/access_log/usage):
 * {@code %UPSTREAM_HOST%} is {@code ip:port}, {@code %RESPONSE_FLAGS%} is {@code -} or
 * comma-separated short flags, {@code %DURATION%} is milliseconds.
 */
class OtlpEnvoyShapeTest {
  static final String TOKEN = "envoy-token";
  static final PoolKey WEB = new PoolKey("shop", "web");

  private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());
  private Vertx vertx;
  private IntakeHarness harness;
  private PoolRuntime web;
  private OtlpClients clients;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    harness =
        new IntakeHarness(vertx, new SimpleMeterRegistry(), OtlpReceiverTest.LIMITS, clock::get);
    harness.reviewer.user(TOKEN, "system:serviceaccount:istio-system:istio-ingressgateway", "shop");
    web =
        harness.pool(WEB, 4, HealthSettings.defaults().toBuilder().maxEjectionPercent(50).build());
    BackendAddresses addresses = new BackendAddresses();
    addresses.replace(
        WEB,
        OtlpReceiverTest.members(
            IntakeHarness.ip(0), IntakeHarness.ip(1), IntakeHarness.ip(2), IntakeHarness.ip(3)));
    harness.intake.receiveOtlp(addresses, List.of(OtlpProfile.TRAEFIK, OtlpProfile.ENVOY));
    clients = new OtlpClients(vertx, harness.port);
  }

  @AfterEach
  void tearDown() {
    clients.close();
    harness.close();
    vertx.close();
  }

  /** One record as Envoy's logger emits it for a request to {@code upstreamHost}. */
  static LogRecord envoy(String upstreamHost, String code, String flags, String durationMs) {
    return LogRecord.newBuilder()
        .setTimeUnixNano(1_700_000_000_000_000_000L)
        .setBody(
            AnyValue.newBuilder()
                .setStringValue(
                    "[2026-12-06T10:00:00.000Z] \"GET / HTTP/1.1\" " + code + " " + flags))
        .addAttributes(attr("upstream_host", upstreamHost))
        .addAttributes(attr("response_code", code))
        .addAttributes(attr("response_flags", flags))
        .addAttributes(attr("duration", durationMs))
        .build();
  }

  /** Envoy's built-in resource labels (an Istio ingress gateway's, here). */
  static ExportLogsServiceRequest export(List<LogRecord> records) {
    return OtlpClients.export(
        Map.of(
            "log_name", "otel_envoy_accesslog",
            "zone_name", "zone-a",
            "cluster_name", "istio-ingressgateway",
            "node_name", "router~10.1.2.3~istio-ingressgateway-5f6d.istio-system~istio-system.svc"),
        records);
  }

  BackendView backend(int i) {
    return IntakeHarness.state(web).get(i);
  }

  static String host(int i) {
    return IntakeHarness.ip(i) + ":8080";
  }

  @Test
  void connectFailuresTimeoutsAndResetsAreLocalOriginAndA5xxIsUpstream() {
    List<LogRecord> records = new ArrayList<>();
    records.add(envoy(host(0), "503", "UF", "1"));
    records.add(envoy(host(0), "504", "UT", "15000"));
    records.add(envoy(host(0), "503", "UC", "3"));
    records.add(envoy(host(0), "503", "URX,UF", "2"));
    records.add(envoy(host(1), "500", "-", "12"));
    records.add(envoy(host(1), "503", "-", "9"));
    records.add(envoy(host(2), "200", "-", "4"));

    var answer = clients.grpc(TOKEN, null, export(records));

    assertThat(answer.status()).isEqualTo(GrpcStatus.OK);
    assertThat(answer.response().hasPartialSuccess()).isFalse();
    assertThat(backend(0).localOriginErrors()).isEqualTo(4);
    assertThat(backend(0).upstreamErrors()).isZero();
    assertThat(backend(1).upstreamErrors()).isEqualTo(2);
    assertThat(backend(1).localOriginErrors()).isZero();
    assertThat(backend(2).upstreamErrors() + backend(2).localOriginErrors()).isZero();
  }

  @Test
  void fiveConnectFailuresEjectByTheLocalOriginRun() {
    List<LogRecord> records = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      records.add(envoy(host(3), "503", "UF", "0"));
    }

    var answer = clients.grpc(TOKEN, "envoy", export(records));

    assertThat(answer.status()).isEqualTo(GrpcStatus.OK);
    assertThat(backend(3).ejected()).isTrue();
  }

  @Test
  void recordsNoHostIsToBlameForAreDroppedAndCounted() {
    List<LogRecord> records = new ArrayList<>();
    records.add(envoy(host(0), "503", "UO", "0")); // circuit breaker overflow
    records.add(envoy("-", "503", "UH", "0")); // no healthy upstream: no host at all
    records.add(envoy("10.200.0.9:8080", "503", "-", "1")); // not a backend of any pool

    var answer = clients.grpc(TOKEN, null, export(records));

    assertThat(answer.status()).isEqualTo(GrpcStatus.OK);
    assertThat(answer.response().getPartialSuccess().getRejectedLogRecords()).isEqualTo(3);
    assertThat(answer.response().getPartialSuccess().getErrorMessage())
        .contains("not_the_hosts=1", "no_address=1", "not_a_backend=1");
    assertThat(backend(0).upstreamErrors() + backend(0).localOriginErrors()).isZero();
  }
}
