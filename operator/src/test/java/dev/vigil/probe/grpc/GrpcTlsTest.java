package dev.vigil.probe.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProberRig;
import dev.vigil.probe.Reason;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** gRPC over TLS: {@code tls.serverName} goes out as SNI (it did not before issue 18). */
class GrpcTlsTest {
  @AutoClose static ProberRig<GrpcProber> rig;

  @BeforeAll
  static void start() {
    rig = ProberRig.start(GrpcProber::new);
  }

  static ProbeResult probe(int port, CheckSpec.Tls tls) {
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.GRPC)
            .timeout(Duration.ofSeconds(10))
            .tls(tls)
            .build();
    return rig.probe(port, spec);
  }

  @Test
  void theServerNameIsSentAsSni() {
    List<String> seen = new CopyOnWriteArrayList<>();
    int port = rig.servers().grpcHealthTls(seen::add);
    ProbeResult r = probe(port, new CheckSpec.Tls(true, "health.shop.internal"));
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(seen).containsExactly("health.shop.internal");
  }

  @Test
  void withoutAServerNameNoSniIsSentForAnIp() {
    List<String> seen = new CopyOnWriteArrayList<>();
    int port = rig.servers().grpcHealthTls(seen::add);
    ProbeResult r = probe(port, new CheckSpec.Tls(true, null));
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(seen).hasSize(1).containsOnlyNulls();
  }

  @Test
  void aVerifyingCheckWithAServerNameRejectsAnUntrustedCertificate() {
    int port = rig.servers().grpcHealthTls(name -> {});
    ProbeResult r = probe(port, new CheckSpec.Tls(false, "health.shop.internal"));
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TLS_UNKNOWN_CA);
  }
}
