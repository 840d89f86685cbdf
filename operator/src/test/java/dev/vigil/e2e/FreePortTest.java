package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.random.RandomGenerator;
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

  /** A random source that draws the same port every time still yields different ports. */
  @Test
  void portsPickedTogetherDifferEvenWhenTheRandomSourceRepeatsItself() {
    int same = ContainerOperator.freePort();
    RandomGenerator stuck =
        new RandomGenerator() {
          @Override
          public long nextLong() {
            return same;
          }

          @Override
          public int nextInt(int origin, int bound) {
            return same;
          }
        };
    int[] ports = ContainerOperator.freePorts(3, stuck);
    assertThat(ports).hasSize(3).doesNotHaveDuplicates().contains(same);
  }

  @Test
  void threePortsAreDistinctAndFreeAfterwards() throws Exception {
    for (int i = 0; i < 50; i++) {
      int[] ports = ContainerOperator.freePorts(3);
      assertThat(ports).as(Arrays.toString(ports)).doesNotHaveDuplicates();
      for (int port : ports) {
        try (ServerSocket s = new ServerSocket()) {
          s.bind(new InetSocketAddress(port));
        }
      }
    }
  }
}
