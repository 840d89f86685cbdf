package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.demo.DemoBackend;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Issue 31 row 2: a finished Pod keeps {@code status.podIP} after the network plugin may have given
 * that address to someone else's Pod. The real operator against the Fabric8 mock API server, each
 * Pod IP a real loopback backend counting the requests it gets: a Succeeded Pod with {@code
 * restartPolicy: Never} (in a pool with {@code respectPodReadiness: false}, the worst case) is
 * never probed, never in a slice, never in status; a running Pod that finishes leaves them.
 */
class FinishedPodIT {
  private static final String NS = "shop";

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final int port = cluster.port();

  @Test
  void aFinishedPodIsNeverProbedNorPublishedAndARunningPodThatFinishesLeaves() {
    DemoBackend live = cluster.backend("127.0.0.10");
    DemoBackend recycled = cluster.backend("127.0.0.11");
    DemoBackend other = cluster.backend("127.0.0.12");
    client.resource(Fixtures.policy(NS, "fast", "200ms", "150ms")).create();
    client.resource(Fixtures.pod(NS, "web-live", "web", live.host())).create();
    client.resource(Fixtures.pod(NS, "web-other", "web", other.host())).create();
    Pod done = Fixtures.pod(NS, "web-done", "web", recycled.host());
    done.getSpec().setRestartPolicy("Never");
    done.getStatus().setPhase("Succeeded");
    done.getStatus().getConditions().get(0).setStatus("False");
    client.resource(done).create();
    BackendPool pool = Fixtures.pool(NS, "web", "fast", "web", port);
    pool.getSpec().setRespectPodReadiness(false);
    client.resource(pool).create();

    startOperator();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> sliceIps().equals(Set.of(live.host(), other.host())));
    long liveBefore = live.requests();
    await().atMost(Duration.ofSeconds(10)).until(() -> live.requests() >= liveBefore + 10);

    assertThat(recycled.requests()).as("probes at the finished Pod's IP").isZero();
    assertThat(sliceIps()).doesNotContain(recycled.host());
    assertThat(statusPods()).containsExactlyInAnyOrder("web-live", "web-other");

    client
        .pods()
        .inNamespace(NS)
        .withName("web-other")
        .edit(
            p -> {
              p.getStatus().setPhase("Failed");
              return p;
            });
    await().atMost(Duration.ofSeconds(20)).until(() -> sliceIps().equals(Set.of(live.host())));
    await().atMost(Duration.ofSeconds(10)).until(() -> statusPods().equals(List.of("web-live")));
    long otherAfter = other.requests();
    long liveAfter = live.requests();
    await().atMost(Duration.ofSeconds(10)).until(() -> live.requests() >= liveAfter + 10);
    assertThat(other.requests())
        .as("probes after the Pod finished")
        .isLessThanOrEqualTo(otherAfter + 1);
    assertThat(recycled.requests()).isZero();
  }

  private void startOperator() {
    cluster.operator(MockCluster.config(NS));
  }

  /** Every address in the pool's slices, ready or not. */
  private Set<String> sliceIps() {
    return cluster.addresses(NS, "web", false);
  }

  private List<String> statusPods() {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName("web").get();
    if (p == null || p.getStatus() == null || p.getStatus().getBackends() == null) {
      return List.of();
    }
    return p.getStatus().getBackends().stream().map(BackendStatus::getPod).sorted().toList();
  }
}
