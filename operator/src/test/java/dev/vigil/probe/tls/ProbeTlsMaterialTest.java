package dev.vigil.probe.tls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Prober;
import dev.vigil.probe.ProberRig;
import dev.vigil.probe.Reason;
import dev.vigil.probe.TlsMaterial;
import dev.vigil.probe.grpc.GrpcProber;
import dev.vigil.probe.http.Http2Prober;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.tcp.TcpProber;
import dev.vigil.security.CertificateAuthority;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Probes with the user's CA bundle and client certificate ({@code active.tls.caBundle}, {@code
 * clientCertificate}) against real loopback backends a private CA signed: HTTP/1.1, h2, gRPC and
 * TCP over TLS. A bundle verifies the backend, its absence (or another CA's bundle) fails as
 * "unknown CA"; an mTLS backend refuses a probe without a client certificate and accepts one with
 * it.
 */
class ProbeTlsMaterialTest {
  static ProberRig<HttpProber> http1;
  static ProberRig<Http2Prober> http2;
  static ProberRig<GrpcProber> grpc;
  static ProberRig<TcpProber> tcp;
  static PrivateCaBackends backends;

  @BeforeAll
  static void start() {
    http1 = ProberRig.start(HttpProber::new);
    http2 = ProberRig.start(Http2Prober::new);
    grpc = ProberRig.start(GrpcProber::new);
    tcp = ProberRig.start(TcpProber::new);
    backends = new PrivateCaBackends(http1.servers());
  }

  @AfterAll
  static void stop() {
    for (ProberRig<?> rig : new ProberRig<?>[] {http1, http2, grpc, tcp}) {
      rig.close();
    }
  }

  static CheckSpec spec(ProbeProtocol protocol, boolean h2, TlsMaterial material) {
    return CheckSpec.builder()
        .protocol(protocol)
        .http2(h2)
        .timeout(Duration.ofSeconds(10))
        .tls(new CheckSpec.Tls(false, PrivateCaBackends.NAME, material))
        .tcp(new CheckSpec.Tcp("ping", "ping"))
        .build();
  }

  static <P extends Prober> ProbeResult probe(
      ProberRig<P> rig, ProbeProtocol protocol, boolean h2, int port, TlsMaterial material) {
    return rig.probe(port, spec(protocol, h2, material));
  }

  static void assertPassed(ProbeResult r) {
    assertThat(r.passed()).as(r.toString()).isTrue();
  }

  static void assertUnknownCa(ProbeResult r) {
    assertThat(r.passed()).as(r.toString()).isFalse();
    assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TLS_UNKNOWN_CA);
    assertThat(r.detail())
        .contains("unknown CA")
        .contains("certificate signed by unknown authority");
  }

  static void assertClientCertificateRequired(ProbeResult r) {
    assertThat(r.passed()).as(r.toString()).isFalse();
    assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TLS_CLIENT_CERTIFICATE);
    assertThat(r.detail()).contains("client certificate required");
  }

  private static final TlsMaterial OTHER_CA =
      new TlsMaterial(new CertificateAuthority("other").caPem(), null, null);

  @Test
  void http1IsVerifiedWithTheBundleAndRefusedWithoutIt() {
    int port = backends.https(false);
    assertPassed(probe(http1, ProbeProtocol.HTTPS, false, port, backends.material(null)));
    assertUnknownCa(probe(http1, ProbeProtocol.HTTPS, false, port, TlsMaterial.NONE));
    assertUnknownCa(probe(http1, ProbeProtocol.HTTPS, false, port, OTHER_CA));
  }

  @Test
  void http2IsVerifiedWithTheBundleAndRefusedWithoutIt() {
    int port = backends.https(false);
    assertPassed(probe(http2, ProbeProtocol.HTTPS, true, port, backends.material(null)));
    assertUnknownCa(probe(http2, ProbeProtocol.HTTPS, true, port, TlsMaterial.NONE));
    assertUnknownCa(probe(http2, ProbeProtocol.HTTPS, true, port, OTHER_CA));
  }

  @Test
  void grpcIsVerifiedWithTheBundleAndRefusedWithoutIt() {
    int port = backends.grpc(false);
    assertPassed(probe(grpc, ProbeProtocol.GRPC, false, port, backends.material(null)));
    assertUnknownCa(probe(grpc, ProbeProtocol.GRPC, false, port, TlsMaterial.NONE));
    assertUnknownCa(probe(grpc, ProbeProtocol.GRPC, false, port, OTHER_CA));
  }

  @Test
  void tcpOverTlsIsVerifiedWithTheBundleAndRefusedWithoutIt() {
    int port = backends.tlsEcho(false);
    assertPassed(probe(tcp, ProbeProtocol.TCP, false, port, backends.material(null)));
    assertUnknownCa(probe(tcp, ProbeProtocol.TCP, false, port, TlsMaterial.NONE));
  }

  @Test
  void anHttp1MtlsBackendAcceptsOnlyAProbeWithItsClientCertificate() {
    int port = backends.https(true);
    assertClientCertificateRequired(
        probe(http1, ProbeProtocol.HTTPS, false, port, backends.material(null)));
    assertPassed(
        probe(
            http1,
            ProbeProtocol.HTTPS,
            false,
            port,
            backends.material(backends.clientCertificate())));
    ProbeResult stranger =
        probe(
            http1,
            ProbeProtocol.HTTPS,
            false,
            port,
            backends.material(PrivateCaBackends.strangerCertificate()));
    assertThat(stranger.reason()).as(stranger.toString()).isEqualTo(Reason.TLS_CLIENT_CERTIFICATE);
  }

  @Test
  void anH2MtlsBackendAcceptsOnlyAProbeWithItsClientCertificate() {
    int port = backends.https(true);
    assertClientCertificateRequired(
        probe(http2, ProbeProtocol.HTTPS, true, port, backends.material(null)));
    assertPassed(
        probe(
            http2,
            ProbeProtocol.HTTPS,
            true,
            port,
            backends.material(backends.clientCertificate())));
  }

  @Test
  void aGrpcMtlsBackendAcceptsOnlyAProbeWithItsClientCertificate() {
    int port = backends.grpc(true);
    assertClientCertificateRequired(
        probe(grpc, ProbeProtocol.GRPC, false, port, backends.material(null)));
    assertPassed(
        probe(
            grpc,
            ProbeProtocol.GRPC,
            false,
            port,
            backends.material(backends.clientCertificate())));
  }

  @Test
  void aTcpMtlsBackendAcceptsOnlyAProbeWithItsClientCertificate() {
    int port = backends.tlsEcho(true);
    assertClientCertificateRequired(
        probe(tcp, ProbeProtocol.TCP, false, port, backends.material(null)));
    assertPassed(
        probe(
            tcp, ProbeProtocol.TCP, false, port, backends.material(backends.clientCertificate())));
  }
}
