package dev.vigil.probe.transport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.TlsMaterial;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** One client per distinct TLS material, shared, and closed once unused for the idle time. */
class TlsClientsTest {
  final AtomicLong now = new AtomicLong(1_000);
  final List<String> closed = new ArrayList<>();
  int made;
  final TlsClients<String> clients =
      new TlsClients<>(
          key -> "client-" + made++ + "-" + key.material().caPem(),
          c -> {
            closed.add(c);
            return Future.succeededFuture();
          },
          now::get);

  static TlsClients.Key key(String ca) {
    return new TlsClients.Key(false, true, new TlsMaterial(ca, null, null));
  }

  @Test
  void equalMaterialSharesOneClient() {
    String a = clients.get(key(new String("CA-1")));
    String b = clients.get(key(new String("CA-1")));
    assertThat(a).isSameAs(b);
    assertThat(clients.get(key("CA-2"))).isNotEqualTo(a);
    assertThat(clients.size()).isEqualTo(2);
  }

  @Test
  void aClientUnusedForTheIdleTimeIsClosedAndOneInUseIsKept() {
    String old = clients.get(key("old"));
    now.addAndGet(TlsClients.IDLE_MS / 2);
    String used = clients.get(key("used"));
    now.addAndGet(TlsClients.IDLE_MS / 2 + TlsClients.SWEEP_EVERY_MS);
    clients.get(key("used"));
    assertThat(closed).containsExactly(old);
    assertThat(clients.size()).isEqualTo(1);
    assertThat(clients.get(key("used"))).isSameAs(used);
  }

  @Test
  void closeClosesEveryClient() {
    clients.get(key("a"));
    clients.get(key("b"));
    clients.close();
    assertThat(closed).hasSize(2);
    assertThat(clients.size()).isZero();
  }
}
