package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.grpc.GrpcProber;
import dev.vigil.probe.http.Http2Prober;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.tcp.TcpProber;
import dev.vigil.probe.transport.SourceAddress;
import io.vertx.core.Handler;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.grpc.server.GrpcServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code --probe-source-address}: every prober, on both transports (epoll, the default, and NIO),
 * binds its end of each probe connection to the given address. Real servers on 127.0.0.1 record the
 * remote address of every connection they accept; the probers bind to 127.0.0.2 (Linux routes all
 * of 127/8 to lo, so it is an address of every host). Without the flag the kernel picks 127.0.0.1.
 */
class ProbeSourceAddressTest {

  private static final String SOURCE = "127.0.0.2";
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final List<String> seen = new CopyOnWriteArrayList<>();
  private ProberRig<ProtocolProber> rig;

  @AfterEach
  void close() {
    if (rig != null) {
      rig.close();
    }
  }

  @ParameterizedTest(name = "native transport {0}")
  @ValueSource(booleans = {true, false})
  void everyProbeLeavesFromTheSourceAddress(boolean nativeTransport) {
    start(nativeTransport, SourceAddress.parse(SOURCE));
    probeEveryProtocol();
    assertThat(seen).hasSizeGreaterThanOrEqualTo(6).allMatch(SOURCE::equals);
  }

  @ParameterizedTest(name = "native transport {0}")
  @ValueSource(booleans = {true, false})
  void withoutOneTheKernelPicksTheSourceAddress(boolean nativeTransport) {
    start(nativeTransport, SourceAddress.KERNEL);
    probeEveryProtocol();
    assertThat(seen).hasSizeGreaterThanOrEqualTo(6).allMatch("127.0.0.1"::equals);
  }

  /**
   * The epoll transport keeps sockets per event loop for the next connect, whichever prober made
   * them: a socket bound to the source address must never serve a prober without one, nor the other
   * way round.
   */
  @Test
  void aPooledSocketServesOnlyAProberBoundAsItIs() throws InterruptedException {
    start(true, SourceAddress.parse(SOURCE));
    Prober unbound = new HttpProber(rig.vertx(), SourceAddress.KERNEL);
    try {
      int http = rig.servers().raw(answering());
      CheckSpec spec = CheckSpec.builder().timeout(TIMEOUT).protocol(ProbeProtocol.HTTP).build();
      List<Prober> order = List.of(rig.prober(), rig.prober(), unbound, unbound, rig.prober());
      for (Prober p : order) {
        ProbeResult result =
            LoopbackServers.await(rig.probeLater(p, new ProbeTarget("127.0.0.1", http), spec));
        assertThat(result.passed()).as("%s", result).isTrue();
        Thread.sleep(200); // the server closes first: the socket goes back to the loop's pool
      }
      assertThat(seen).containsExactly(SOURCE, SOURCE, "127.0.0.1", "127.0.0.1", SOURCE);
    } finally {
      LoopbackServers.await(unbound.close());
    }
  }

  private void start(boolean nativeTransport, SourceAddress source) {
    rig =
        ProberRig.start(
            new VertxOptions().setPreferNativeTransport(nativeTransport),
            v ->
                new ProtocolProber(
                    new HttpProber(v, source),
                    new TcpProber(v, source),
                    new GrpcProber(v, source),
                    new Http2Prober(v, source)));
    assertThat(rig.vertx().isNativeTransportEnabled()).isEqualTo(nativeTransport);
  }

  /**
   * Plain HTTP twice (on epoll the second probe reuses the first one's pooled socket, which must
   * keep its bound address), TCP, HTTPS (Vert.x's NetClient), h2c and gRPC (Vert.x's HTTP clients).
   */
  private void probeEveryProtocol() {
    LoopbackServers servers = rig.servers();
    int http = servers.raw(answering());
    int https =
        servers.raw(
            new NetServerOptions()
                .setSsl(true)
                .setKeyCertOptions(servers.certificate().keyCertOptions()),
            answering());
    int h2c =
        servers.http(
            new HttpServerOptions(),
            s ->
                s.connectionHandler(c -> seen.add(c.remoteAddress().hostAddress()))
                    .requestHandler(r -> r.response().end("ok")));
    GrpcServer grpc = LoopbackServers.serving(rig.vertx());
    int grpcPort =
        servers.http(
            new HttpServerOptions(),
            s ->
                s.connectionHandler(c -> seen.add(c.remoteAddress().hostAddress()))
                    .requestHandler(grpc));

    CheckSpecBuilder spec = CheckSpec.builder().timeout(TIMEOUT);
    assertPasses(http, spec.protocol(ProbeProtocol.HTTP).build());
    assertPasses(http, spec.protocol(ProbeProtocol.HTTP).build());
    assertPasses(http, spec.protocol(ProbeProtocol.TCP).build());
    assertPasses(
        https, spec.protocol(ProbeProtocol.HTTPS).tls(new CheckSpec.Tls(true, null)).build());
    assertPasses(
        h2c, spec.protocol(ProbeProtocol.HTTP).tls(CheckSpec.Tls.NONE).http2(true).build());
    assertPasses(grpcPort, spec.protocol(ProbeProtocol.GRPC).tls(CheckSpec.Tls.NONE).build());
  }

  /** Records each connection's remote address, then answers any bytes with a 200 and closes. */
  private Handler<NetSocket> answering() {
    return socket -> {
      seen.add(socket.remoteAddress().hostAddress());
      socket.handler(
          request -> {
            socket.handler(null);
            socket
                .write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .onComplete(ar -> socket.close());
          });
    };
  }

  private void assertPasses(int port, CheckSpec spec) {
    ProbeResult result = rig.probe(port, spec);
    assertThat(result.passed()).as("%s on port %d: %s", spec.protocol(), port, result).isTrue();
  }
}
