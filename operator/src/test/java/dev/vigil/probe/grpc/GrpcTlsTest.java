package dev.vigil.probe.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.LoopbackServers;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** gRPC over TLS: {@code tls.serverName} goes out as SNI (it did not before issue 18). */
class GrpcTlsTest {
  static Vertx vertx;
  static LoopbackServers servers;
  static GrpcProber prober;
  static Context context;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    servers = new LoopbackServers(vertx);
    prober = new GrpcProber(vertx);
    context = vertx.getOrCreateContext();
  }

  @AfterAll
  static void stop() {
    LoopbackServers.await(prober.close());
    servers.close();
    LoopbackServers.await(vertx.close());
  }

  static ProbeResult probe(int port, CheckSpec.Tls tls) {
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.GRPC)
            .timeout(Duration.ofSeconds(10))
            .tls(tls)
            .build();
    Promise<ProbeResult> promise = Promise.promise();
    context.runOnContext(
        v -> prober.probe(new ProbeTarget("127.0.0.1", port), spec).onComplete(promise));
    return LoopbackServers.await(promise.future());
  }

  @Test
  void theServerNameIsSentAsSni() {
    List<String> seen = new CopyOnWriteArrayList<>();
    int port = servers.grpcHealthTls(seen::add);
    ProbeResult r = probe(port, new CheckSpec.Tls(true, "health.shop.internal"));
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(seen).containsExactly("health.shop.internal");
  }

  @Test
  void withoutAServerNameNoSniIsSentForAnIp() {
    List<String> seen = new CopyOnWriteArrayList<>();
    int port = servers.grpcHealthTls(seen::add);
    ProbeResult r = probe(port, new CheckSpec.Tls(true, null));
    assertThat(r.passed()).as(r.toString()).isTrue();
    assertThat(seen).hasSize(1).containsOnlyNulls();
  }

  @Test
  void aVerifyingCheckWithAServerNameRejectsAnUntrustedCertificate() {
    int port = servers.grpcHealthTls(name -> {});
    ProbeResult r = probe(port, new CheckSpec.Tls(false, "health.shop.internal"));
    assertThat(r.passed()).isFalse();
    assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TLS);
  }
}
