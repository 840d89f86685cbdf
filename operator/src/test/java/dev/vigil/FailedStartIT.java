package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A start that fails (every API call answers 404: JOSDK's informers cannot start) releases what it
 * opened before: the ops port and the Event thread. A failure while stopping is logged.
 */
class FailedStartIT {
  private final KubernetesMockServer server = new KubernetesMockServer(false);
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    server.destroy();
  }

  private static long eventThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("vigil-events") && t.isAlive())
        .count();
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("0.0.0.0"))) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  @Test
  void aFailedStartReleasesTheOpsPortAndTheEventThread() throws Exception {
    server.init(InetAddress.getLoopbackAddress(), 0);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    long threadsBefore = eventThreads();
    try (KubernetesClient client = server.createClient()) {
      assertThatThrownBy(
              () ->
                  Vigil.start(
                      StartOptions.of(
                              OperatorConfig.embedded(
                                  "--namespaces=shop",
                                  "--metrics-port=" + port,
                                  "--outcome-port=-1",
                                  "--lease-namespace=d"),
                              client,
                              vertx)
                          .meters(new SimpleMeterRegistry())))
          .isInstanceOf(RuntimeException.class);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> free(port));
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(eventThreads()).isLessThanOrEqualTo(threadsBefore));
  }

  @Test
  void aFailureWhileStoppingIsLogged() {
    Logger logger = (Logger) LoggerFactory.getLogger(Lifecycle.class);
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    logger.addAppender(captured);
    try {
      Lifecycle.awaitStopped(
          Future.failedFuture(new IllegalStateException("port stuck")), "the intake");
    } finally {
      logger.detachAppender(captured);
    }
    assertThat(captured.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .anyMatch(m -> m.contains("the intake") && m.contains("port stuck"));
  }
}
