package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.OnConflict;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Three sharded replicas of the real operator against the Fabric8 mock server in CRUD mode, one
 * HealthPolicy used by pools of every replica: each replica computes the policy's aggregate from
 * the same pool statuses, and exactly one writes it. Counted at the API server: the requests that
 * write the policy's status, by the user agent each replica's client sends.
 */
class PolicyStatusWriterIT {
  private static final String NS = "shop";
  private static final int POOLS = 9;
  private static final List<String> REPLICAS = List.of("replica-a", "replica-b", "replica-c");

  /** A status write that reached the API server: who sent it and what it was answered. */
  record Write(String agent, int code) {}

  private final List<Write> writes = new CopyOnWriteArrayList<>();

  @AutoClose
  private final MockCluster cluster =
      MockCluster.start(
          expectations ->
              new KubernetesMixedDispatcher(expectations) {
                @Override
                public MockResponse dispatch(RecordedRequest request) {
                  MockResponse response = super.dispatch(request);
                  String path = request.getPath();
                  if (!request.getMethod().equals("GET")
                      && path.contains("/healthpolicies/fast/status")) {
                    writes.add(new Write(request.getHeader("User-Agent"), response.code()));
                  }
                  return response;
                }
              });

  private final KubernetesClient client = cluster.client();

  @Test
  void oneReplicaWritesAPolicysStatusAndNoWriteConflicts() {
    client.resource(Fixtures.policy(NS, "fast", "300ms", "250ms")).create();
    for (int p = 0; p < POOLS; p++) {
      cluster.pods(NS, "web" + p, 1, 20 + p);
      client.resource(Fixtures.pool(NS, "web" + p, "fast", "web" + p, cluster.port())).create();
    }
    for (String identity : REPLICAS) {
      cluster.operator(
          cluster.newClient(c -> c.withUserAgent(identity)),
          MockCluster.sharded(NS, identity, "zone-" + identity.substring(identity.length() - 1)),
          o -> o.election(MockCluster.election(identity)));
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> owners().size() >= 2 && policyCounts(POOLS));

    // a new generation of the policy: a new status (observedGeneration) every replica computes
    writes.clear();
    // every replica writes the policy's status: an edit on the resourceVersion read may get 409
    long generation =
        client
                .resources(HealthPolicy.class)
                .inNamespace(NS)
                .withName("fast")
                .get()
                .getMetadata()
                .getGeneration()
            + 1;
    OnConflict.retry(
        () ->
            client
                .resources(HealthPolicy.class)
                .inNamespace(NS)
                .withName("fast")
                .edit(
                    p -> {
                      p.getSpec().getActive().setTimeout("200ms");
                      return p;
                    }));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              HealthPolicy now =
                  client.resources(HealthPolicy.class).inNamespace(NS).withName("fast").get();
              return now.getStatus() != null
                  && Objects.equals(now.getStatus().getObservedGeneration(), generation);
            });
    sleep(1_500); // the other replicas' reconciles of the same change, had they written

    assertThat(writes).as("status writes of the policy").isNotEmpty();
    assertThat(writes).as("answers to status writes of the policy").allMatch(w -> w.code() < 300);
    assertThat(writes.stream().map(Write::agent).collect(Collectors.toSet()))
        .as("replicas that wrote the policy's status")
        .hasSize(1)
        .allMatch(REPLICAS::contains);
  }

  private Set<String> owners() {
    return client.resources(BackendPool.class).inNamespace(NS).list().getItems().stream()
        .map(p -> p.getMetadata().getLabels())
        .filter(Objects::nonNull)
        .map(l -> l.get(ShardConfig.SHARD_LABEL))
        .filter(Objects::nonNull)
        .collect(Collectors.toSet());
  }

  private boolean policyCounts(int pools) {
    HealthPolicy now = client.resources(HealthPolicy.class).inNamespace(NS).withName("fast").get();
    return now.getStatus() != null && Integer.valueOf(pools).equals(now.getStatus().getPools());
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
