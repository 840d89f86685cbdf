package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.BeforeAll;

/**
 * The rows of {@link ProberTableTest} on Netty's native epoll transport, the operator's default
 * ({@code --native-transport}); the parent runs them on NIO, the fallback. A verdict must not
 * depend on the transport.
 */
class NativeTransportProberTableTest extends ProberTableTest {

  @BeforeAll
  static void start() {
    startOn(new VertxOptions().setPreferNativeTransport(true));
    assertThat(rig.vertx().isNativeTransportEnabled())
        .as("epoll transport: %s", rig.vertx().unavailableNativeTransportCause())
        .isTrue();
  }
}
