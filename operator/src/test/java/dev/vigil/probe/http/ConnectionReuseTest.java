package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.ProberRig;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

class ConnectionReuseTest {

  @AutoClose final ProberRig<HttpProber> rig = ProberRig.start(HttpProber::new);
  final HttpProber prober = rig.prober();
  final AtomicInteger connections = new AtomicInteger();
  final AtomicInteger requests = new AtomicInteger();

  int keepAliveServer() {
    return rig.servers()
        .raw(
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
    return rig.probe(port, spec);
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
    // The first connection answers its first request and keeps the socket open (no Connection:
    // close), so the prober keeps it for reuse; on the second request it closes without a byte,
    // as a server whose keep-alive timer fired at that moment does. Only the retry on a fresh
    // connection can make the second probe pass.
    AtomicInteger droppedRequests = new AtomicInteger();
    int port =
        rig.servers()
            .raw(
                socket -> {
                  int connection = connections.incrementAndGet();
                  AtomicInteger onThisConnection = new AtomicInteger();
                  socket.handler(
                      request -> {
                        requests.incrementAndGet();
                        if (connection == 1 && onThisConnection.incrementAndGet() == 2) {
                          droppedRequests.incrementAndGet();
                          socket.close();
                          return;
                        }
                        socket.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                      });
                });
    assertThat(probe(port, true).passed()).isTrue();
    assertThat(prober.idleConnections()).as("the first connection is kept for reuse").isEqualTo(1);

    ProbeResult second = probe(port, true);

    assertThat(second.passed()).as(second.toString()).isTrue();
    assertThat(droppedRequests.get())
        .as("the second probe went out on the reused connection")
        .isOne();
    assertThat(connections.get()).as("one reused connection, then one fresh").isEqualTo(2);
    assertThat(requests.get()).isEqualTo(3);
  }
}
