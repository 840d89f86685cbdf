package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackendAddressesTest {
  static final PoolKey WEB = new PoolKey("shop", "web");
  static final PoolKey API = new PoolKey("shop", "api");

  static Member member(String ip, int probePort, List<Integer> ports) {
    return Member.of("pod-" + ip, "uid", ip, probePort, "n", "z", false, false, ports);
  }

  @Test
  void knowsEachMemberAtEveryPortThePoolTargetsAndForgetsWhatLeft() {
    BackendAddresses addresses = new BackendAddresses();
    addresses.replace(WEB, List.of(member("10.0.0.1", 8081, List.of(8080, 9090))));

    assertThat(addresses.pools("10.0.0.1", 8080)).containsExactly(WEB);
    assertThat(addresses.pools("10.0.0.1", 9090)).containsExactly(WEB);
    assertThat(addresses.pools("10.0.0.1", 8081)).containsExactly(WEB);
    assertThat(addresses.pools("10.0.0.1", 7000)).isEmpty();

    addresses.replace(WEB, List.of(member("10.0.0.2", 8080, List.of(8080))));

    assertThat(addresses.pools("10.0.0.1", 8080)).isEmpty();
    assertThat(addresses.pools("10.0.0.2", 8080)).containsExactly(WEB);
    assertThat(addresses.size()).isEqualTo(1);
  }

  @Test
  void anAddressInTwoPoolsBelongsToBothUntilOneLetsItGo() {
    BackendAddresses addresses = new BackendAddresses();
    addresses.replace(WEB, List.of(member("10.0.0.1", 8080, List.of(8080))));
    addresses.replace(API, List.of(member("10.0.0.1", 8080, List.of(8080))));

    assertThat(addresses.pools("10.0.0.1", 8080)).containsExactlyInAnyOrder(WEB, API);

    addresses.remove(WEB);

    assertThat(addresses.pools("10.0.0.1", 8080)).containsExactly(API);
  }
}
