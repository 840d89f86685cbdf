package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ConnectionReuseTest {

  Vertx vertx;
  LoopbackServers servers;
  HttpProber prober;
  Context context;
  final AtomicInteger connections = new AtomicInteger();
  final AtomicInteger requests = new AtomicInteger();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    servers = new LoopbackServers(vertx);
    prober = new HttpProber(vertx);
    context = vertx.getOrCreateContext();
  }

  @AfterEach
  void stop() {
    LoopbackServers.await(prober.close());
    servers.close();
    LoopbackServers.await(vertx.close());
  }

  int keepAliveServer() {
    return servers.raw(
        socket -> {
          connections.incrementAndGet();
          socket.handler(
              request -> {
                requests.incrementAndGet();
                socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
              });
        });
  }

  ProbeResult probe(int port, boolean reuse) {
    CheckSpec spec =
        CheckSpec.builder().timeout(Duration.ofSeconds(2)).reuseConnection(reuse).build();
    Promise<ProbeResult> p = Promise.promise();
    context.runOnContext(v -> prober.probe(new ProbeTarget("127.0.0.1", port), spec).onComplete(p));
    return LoopbackServers.await(p.future());
  }

  @Test
  void reuseConnectionKeepsOneConnectionPerBackend() {
    int port = keepAliveServer();
    for (int i = 0; i < 5; i++) {
      assertThat(probe(port, true).passed()).isTrue();
    }
    assertThat(requests.get()).isEqualTo(5);
    assertThat(connections.get()).isEqualTo(1);
    assertThat(prober.idleConnections()).isEqualTo(1);

    prober.forget(new ProbeTarget("127.0.0.1", port));
    assertThat(prober.idleConnections()).isZero();
  }

  @Test
  void freshConnectionPerProbeByDefault() {
    int port = keepAliveServer();
    for (int i = 0; i < 3; i++) {
      assertThat(probe(port, false).passed()).isTrue();
    }
    assertThat(connections.get()).isEqualTo(3);
    assertThat(prober.idleConnections()).isZero();
  }

  @Test
  void aReusedConnectionClosedByTheServerIsRetriedOnAFreshOne() {
    AtomicInteger served = new AtomicInteger();
    int port =
        servers.raw(
            socket ->
                socket.handler(
                    request -> {
                      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                      if (served.incrementAndGet() == 1) {
                        // the server forgets to say Connection: close, then drops the idle socket
                        vertx.setTimer(50, id -> socket.close());
                      }
                    }));
    assertThat(probe(port, true).passed()).isTrue();
    sleep(200);
    ProbeResult second = probe(port, true);
    assertThat(second.passed()).as(second.toString()).isTrue();
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
