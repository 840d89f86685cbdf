package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.OperatorConfig;
import dev.vigil.Vigil;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.demo.DemoBackend;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 31 row 8: a tenant creating and deleting pools in a loop must not grow the operator's
 * metrics. The real operator against the Fabric8 mock API server: each round creates pools with new
 * names whose backend comes Up (transition counters, pool gauges after a scrape), deletes them, and
 * the registry's series count (in the registry the test passes, and in the Prometheus scrape)
 * returns to its baseline with no series naming a pool left.
 */
class PoolSeriesIT {
  private static final String NS = "tenant-a";
  private static final int ROUNDS = 4;
  private static final int POOLS = 3;

  private MockCluster cluster;
  private KubernetesClient client;
  private Vigil.Running operator;
  private SimpleMeterRegistry meters;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void setUp() {
    cluster = MockCluster.start();
    client = cluster.client();
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void creatingAndDeletingPoolsInALoopLeavesTheSeriesCountAtItsBaseline() throws Exception {
    int port = cluster.port();
    DemoBackend backend = cluster.backend("127.0.0.10");
    client.resource(Fixtures.policy(NS, "fast", "200ms", "150ms")).create();
    client.resource(Fixtures.pod(NS, "web-0", "web", backend.host())).create();
    MockCluster.Replica replica =
        cluster.operator(
            OperatorConfig.embedded(
                "--namespaces=" + NS, "--outcome-port=-1", "--status-interval-ms=200"));
    operator = replica.running();
    meters = replica.meters();

    int baseline = -1;
    int scrapedBaseline = -1;
    for (int round = 0; round < ROUNDS; round++) {
      List<String> names = new ArrayList<>();
      for (int i = 0; i < POOLS; i++) {
        String name = "web-" + round + "-" + i;
        names.add(name);
        client.resource(Fixtures.pool(NS, name, "fast", "web", port)).create();
      }
      await().atMost(Duration.ofSeconds(20)).until(() -> names.stream().allMatch(this::up));
      scrape();
      assertThat(poolSeries()).as("series naming a pool while the pools live").isPositive();

      for (String name : names) {
        client.resources(BackendPool.class).inNamespace(NS).withName(name).delete();
      }
      await().atMost(Duration.ofSeconds(20)).until(() -> operator.runtimes().all().isEmpty());
      String scraped = scrape();
      if (round == 0) {
        baseline = meters.getMeters().size();
        scrapedBaseline = seriesLines(scraped);
      }
      assertThat(poolSeries()).as("series naming a pool after round %d", round).isZero();
      assertThat(scraped).as("scrape after round %d", round).doesNotContain("pool=\"web-");
      assertThat(meters.getMeters()).as("meters after round %d", round).hasSize(baseline);
      assertThat(seriesLines(scraped))
          .as("scraped series, round %d", round)
          .isEqualTo(scrapedBaseline);
    }
  }

  private boolean up(String pool) {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName(pool).get();
    return p != null
        && p.getStatus() != null
        && Integer.valueOf(1).equals(p.getStatus().getAvailable());
  }

  private long poolSeries() {
    return meters.getMeters().stream()
        .map(Meter::getId)
        .filter(id -> id.getTag("pool") != null)
        .count();
  }

  /** GET /metrics, which also refreshes the pool gauges as a Prometheus scrape does. */
  private String scrape() throws Exception {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + operator.ops().port() + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  private static int seriesLines(String scrape) {
    return (int) scrape.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).count();
  }
}
