package dev.vigil.passive;

import static dev.vigil.passive.OtlpClients.traefik;
import static dev.vigil.passive.OtlpClients.traefikExport;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.Identity;
import dev.vigil.testing.PresentedCertificate;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.vertx.core.Vertx;
import io.vertx.grpc.common.GrpcStatus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Callers identified by a client certificate from the CA bundle an admin names ({@code
 * --intake-client-ca}), on the real {@link OutcomeIntake} over TLS on loopback: OTLP/gRPC,
 * OTLP/HTTP and the JSON intake; the SubjectAccessReview is the {@link FakeReviewer}'s.
 */
class ClientCertificateIntakeTest {
  static final CertificateAuthority NAMED = new CertificateAuthority("exporters-ca");
  static final CertificateAuthority OTHER = new CertificateAuthority("other-ca");
  static final String TOKEN = "traefik-token";
  static final String TOKEN_USER = "system:serviceaccount:ingress:traefik";
  static final String CERT_USER = "traefik-exporter";
  static final PoolKey WEB = new PoolKey("shop", "web");
  static final String BACKEND = IntakeHarness.ip(0) + ":8080";
  static final IntakeLimits LIMITS = IntakeLimits.defaults().withMaxBodyBytes(64 * 1024);

  @TempDir Path dir;
  private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());
  private Vertx vertx;
  private Path caFile;
  private ClientCertificates cas;
  private IntakeHarness harness;
  private PoolRuntime web;

  @BeforeEach
  void setUp() throws Exception {
    vertx = Vertx.vertx();
    caFile = dir.resolve("ca.crt");
    Files.writeString(caFile, NAMED.caPem());
    cas = new ClientCertificates(vertx, caFile, clock::get);
    start(cas);
  }

  private void start(ClientCertificates trusted) {
    start(trusted, TestTls.certFile(), TestTls.keyFile());
  }

  private void start(ClientCertificates trusted, Path certFile, Path keyFile) {
    harness =
        new IntakeHarness(
            vertx, new SimpleMeterRegistry(), LIMITS, clock::get, certFile, keyFile, trusted);
    harness.reviewer.user(TOKEN, TOKEN_USER, "shop");
    harness.reviewer.namespaces.put(CERT_USER, Set.of("shop"));
    web =
        harness.pool(WEB, 3, HealthSettings.defaults().toBuilder().maxEjectionPercent(50).build());
    BackendAddresses addresses = new BackendAddresses();
    addresses.replace(
        WEB,
        OtlpReceiverTest.members(IntakeHarness.ip(0), IntakeHarness.ip(1), IntakeHarness.ip(2)));
    harness.intake.receiveOtlp(addresses, List.of(OtlpProfile.TRAEFIK, OtlpProfile.ENVOY));
  }

  @AfterEach
  void tearDown() {
    harness.close();
    vertx.close();
  }

  static PresentedCertificate client(CertificateAuthority ca, Duration validity) {
    return new PresentedCertificate(
        ca.issueClient(CERT_USER, List.of("ingress", "exporters"), validity));
  }

  static List<LogRecord> failures(int n) {
    return Collections.nCopies(n, traefik(BACKEND, 500, 500));
  }

  BackendView backend(int i) {
    return IntakeHarness.state(web).get(i);
  }

  /** A JSON batch for shop/web, with {@code token} as bearer token when not null. */
  HttpResponse<String> report(HttpClient http, String token, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + harness.port + OutcomeIntake.path("shop", "web")))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static String failing(int backend) {
    return "[{\"backend\":\"" + IntakeHarness.ip(backend) + ":8080\",\"status\":503}]";
  }

  @Test
  void aCertificateFromTheNamedCaIsTheCallerAndItsReviewCarriesCnAndO() throws Exception {
    PresentedCertificate cert = client(NAMED, Duration.ofHours(1));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port, cert)) {
      var grpc = clients.grpc(null, null, traefikExport(failures(5)));
      var http =
          clients.http(
              null, "application/x-protobuf", traefikExport(failures(1)).toByteArray(), null);
      var json = report(clients.httpClient(), null, failing(1));

      assertThat(grpc.status()).isEqualTo(GrpcStatus.OK);
      assertThat(grpc.response().hasPartialSuccess()).isFalse();
      assertThat(http.statusCode()).isEqualTo(200);
      assertThat(json.statusCode()).as(json.body()).isEqualTo(200);
    }
    assertThat(backend(0).ejected()).isTrue();
    assertThat(backend(1).upstreamErrors()).isEqualTo(1);
    assertThat(harness.reviewer.tokenReviews).as("no TokenReview for a certificate").hasValue(0);
    assertThat(harness.reviewer.reviewed)
        .isNotEmpty()
        .allSatisfy(
            who -> {
              assertThat(who.username()).isEqualTo(CERT_USER);
              assertThat(who.groups())
                  .containsExactly("ingress", "exporters", ClientCertificates.AUTHENTICATED);
            });
    assertThat(cert.askedFor)
        .as("each handshake named the bundle's one CA")
        .isNotEmpty()
        .allSatisfy(named -> assertThat(named).singleElement().isEqualTo("CN=exporters-ca"));
  }

  @Test
  void aCertificateFromAnotherCaIsRefusedNamingIt() throws Exception {
    PresentedCertificate cert = client(OTHER, Duration.ofHours(1));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port, cert)) {
      var grpc = clients.grpc(null, null, traefikExport(failures(5)));
      var json = report(clients.httpClient(), null, failing(0));

      assertThat(grpc.status()).isEqualTo(GrpcStatus.UNAUTHENTICATED);
      assertThat(grpc.message())
          .contains("CN=" + CERT_USER, "CN=other-ca", "does not verify against the CAs in");
      assertThat(json.statusCode()).isEqualTo(401);
      assertThat(json.body()).contains("unauthenticated", "does not verify against the CAs in");
    }
    assertThat(backend(0).upstreamErrors()).isZero();
    assertThat(harness.reviewer.accessReviews).hasValue(0);
  }

  @Test
  void anExpiredCertificateFromTheNamedCaIsRefusedNamingItsExpiry() throws Exception {
    try (OtlpClients clients =
        new OtlpClients(vertx, harness.port, client(NAMED, Duration.ofMinutes(-1)))) {
      var grpc = clients.grpc(null, null, traefikExport(failures(5)));
      var json = report(clients.httpClient(), null, failing(0));

      assertThat(grpc.status()).isEqualTo(GrpcStatus.UNAUTHENTICATED);
      assertThat(grpc.message()).contains("CN=" + CERT_USER, "expired at");
      assertThat(json.statusCode()).isEqualTo(401);
      assertThat(json.body()).contains("expired at");
    }
    assertThat(backend(0).upstreamErrors()).isZero();
  }

  @Test
  void aCallerWithoutACertificateStillAuthenticatesWithItsToken() throws Exception {
    try (OtlpClients clients = new OtlpClients(vertx, harness.port)) {
      var grpc = clients.grpc(TOKEN, null, traefikExport(failures(5)));
      var json = report(clients.httpClient(), TOKEN, failing(1));

      assertThat(grpc.status()).isEqualTo(GrpcStatus.OK);
      assertThat(json.statusCode()).as(json.body()).isEqualTo(200);
    }
    assertThat(backend(0).ejected()).isTrue();
    assertThat(harness.reviewer.reviewed).extracting(Identity::username).containsOnly(TOKEN_USER);
  }

  @Test
  void aVerifiedCertificateWinsOverATokenAndARefusedOneLeavesItToTheToken() throws Exception {
    try (OtlpClients clients =
        new OtlpClients(vertx, harness.port, client(NAMED, Duration.ofHours(1)))) {
      assertThat(clients.grpc("made-up", null, traefikExport(failures(1))).status())
          .isEqualTo(GrpcStatus.OK);
    }
    assertThat(harness.reviewer.tokenReviews).as("the token was not looked at").hasValue(0);

    try (OtlpClients clients =
        new OtlpClients(vertx, harness.port, client(OTHER, Duration.ofHours(1)))) {
      assertThat(clients.grpc(TOKEN, null, traefikExport(failures(1))).status())
          .isEqualTo(GrpcStatus.OK);
    }
    assertThat(harness.reviewer.reviewed)
        .extracting(Identity::username)
        .containsExactly(CERT_USER, TOKEN_USER);
    assertThat(backend(0).upstreamErrors()).isEqualTo(2);
  }

  @Test
  void withoutTheCaFlagNoCertificateIsAskedForAndATokenIsRequired() throws Exception {
    harness.close();
    start(null);
    PresentedCertificate cert = client(NAMED, Duration.ofHours(1));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port, cert)) {
      var grpc = clients.grpc(null, null, traefikExport(failures(5)));
      var json = report(clients.httpClient(), null, failing(0));

      assertThat(grpc.status()).isEqualTo(GrpcStatus.UNAUTHENTICATED);
      assertThat(json.statusCode()).isEqualTo(401);
    }
    assertThat(cert.askedFor).as("the port asked for no certificate").isEmpty();
    assertThat(backend(0).upstreamErrors()).isZero();
    assertThat(harness.reviewer.accessReviews).hasValue(0);
  }

  @Test
  void aRotatedServingCertificateStillAsksForClientCertificates(@TempDir Path served)
      throws Exception {
    harness.close();
    cas = new ClientCertificates(vertx, caFile, clock::get);
    TestTls.ca()
        .issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1))
        .writeTo(served);
    start(cas, served.resolve("tls.crt"), served.resolve("tls.key"));
    TestTls.ca()
        .issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1))
        .writeTo(served);
    assertThat(IntakeHarness.await(harness.certificate.check())).isTrue();

    PresentedCertificate cert = client(NAMED, Duration.ofHours(1));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port, cert)) {
      assertThat(clients.grpc(null, null, traefikExport(failures(1))).status())
          .isEqualTo(GrpcStatus.OK);
    }
    assertThat(cert.askedFor).isNotEmpty();
  }

  @Test
  void aRotatedCaBundleIsUsedWithoutARestart() throws Exception {
    PresentedCertificate other = client(OTHER, Duration.ofHours(1));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port, other)) {
      assertThat(clients.grpc(null, null, traefikExport(failures(1))).status())
          .isEqualTo(GrpcStatus.UNAUTHENTICATED);
      assertThat(IntakeHarness.await(cas.check())).as("nothing changed").isFalse();

      Files.writeString(caFile, OTHER.caPem());
      assertThat(IntakeHarness.await(cas.check())).isTrue();

      assertThat(clients.grpc(null, null, traefikExport(failures(1))).status())
          .as("the same connection, verified again against the new bundle")
          .isEqualTo(GrpcStatus.OK);
    }
    PresentedCertificate named = client(NAMED, Duration.ofHours(1));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port, named)) {
      assertThat(clients.grpc(null, null, traefikExport(failures(1))).status())
          .as("the old CA's certificates are refused")
          .isEqualTo(GrpcStatus.UNAUTHENTICATED);
    }
    assertThat(named.askedFor.get(0)).singleElement().isEqualTo("CN=other-ca");

    Files.writeString(caFile, "-----BEGIN CERTIFICATE-----\nbroken\n");
    assertThat(IntakeHarness.await(cas.check()))
        .as("a half-written bundle keeps the old one")
        .isFalse();
    try (OtlpClients clients =
        new OtlpClients(vertx, harness.port, client(OTHER, Duration.ofHours(1)))) {
      assertThat(clients.grpc(null, null, traefikExport(failures(1))).status())
          .isEqualTo(GrpcStatus.OK);
    }
    assertThat(backend(0).upstreamErrors()).isEqualTo(2);
  }
}
