package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.api.v1alpha1.HealthPolicy;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * /readyz while JOSDK starts: {@code Operator.start()} holds its controller manager's lock until
 * every informer has listed, and here the API server accepts the list and never answers, so the
 * start waits for as long as the test lets it.
 */
class ReadinessDuringStartTest {

  /** Reconciles nothing: only its informer matters. */
  static final class Idle implements Reconciler<HealthPolicy> {
    @Override
    public UpdateControl<HealthPolicy> reconcile(HealthPolicy resource, Context<HealthPolicy> c) {
      return UpdateControl.noUpdate();
    }
  }

  @Test
  void answersOperatorStartingWhileTheStartWaitsForItsInformers() throws Exception {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    CountDownLatch listing = new CountDownLatch(1);
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    accepted.add(silent.accept());
                    listing.countDown();
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              },
              "silent-api-server");
      acceptor.setDaemon(true);
      acceptor.start();
      KubernetesClient client =
          new KubernetesClientBuilder()
              .withConfig(
                  new ConfigBuilder()
                      .withMasterUrl("http://127.0.0.1:" + silent.getLocalPort())
                      .withRequestTimeout(60_000)
                      .withRequestRetryBackoffLimit(0)
                      .build())
              .build();
      Operator operator =
          new Operator(
              o ->
                  o.withKubernetesClient(client)
                      .checkingCRDAndValidateLocalModel(false)
                      .withCacheSyncTimeout(Duration.ofSeconds(60)));
      operator.register(new Idle());
      Readiness readiness = Readiness.of(operator, Leadership.sole());
      CompletableFuture<Void> start = CompletableFuture.runAsync(operator::start);
      try {
        assertThat(listing.await(30, TimeUnit.SECONDS)).as("the informer's list arrives").isTrue();

        // JOSDK's own accessor waits for the start: what /readyz must not call per request
        CompletableFuture<Boolean> perRequest =
            CompletableFuture.supplyAsync(() -> operator.getRuntimeInfo().isStarted());
        assertThatThrownBy(() -> perRequest.get(1, TimeUnit.SECONDS))
            .isInstanceOf(TimeoutException.class);

        Readiness.Verdict verdict =
            CompletableFuture.supplyAsync(readiness::check).get(10, TimeUnit.SECONDS);
        assertThat(verdict).isEqualTo(new Readiness.Verdict(false, "operator starting"));
        assertThat(start).isNotDone();
      } finally {
        // the list fails, the start gives up and releases the lock
        silent.close();
        for (Socket s : accepted) {
          s.close();
        }
        try {
          start.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException expected) {
          // no API server: the start fails, as it should
        }
        operator.stop();
        client.close();
      }
    }
  }

  @Test
  void aFencedReplicaIsNotReadyWhateverItsRole() {
    Leadership leading = Leadership.elected();
    leading.startedLeading();
    Readiness readiness = new Readiness(() -> true, () -> true, leading);
    assertThat(readiness.check().ready()).isTrue();
    leading.fenced();
    assertThat(readiness.check())
        .isEqualTo(
            new Readiness.Verdict(
                false, "shard Lease lost: not probing or writing until restarted"));
  }
}
