package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class FreePortTest {
  @Test
  void aPortOutsideTheEphemeralRangeThatCanBeBound() throws Exception {
    int[] range = ContainerOperator.ephemeralRange();
    for (int i = 0; i < 20; i++) {
      int port = ContainerOperator.freePort();
      if (range[0] > 3_000 || range[1] < 65_535) {
        assertThat(port < range[0] || port > range[1])
            .as("%d outside %d-%d", port, range[0], range[1])
            .isTrue();
      }
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress(port));
        assertThat(s.getLocalPort()).isEqualTo(port);
      }
    }
  }
}
