package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.demo.EmbeddedApiServer;
import dev.vigil.publish.WriteBudget;
import dev.vigil.publish.WriteBudget.Priority;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A shard Lease carries its replica's zone and failing share (docs/design.md §8) on its create and
 * on every renewal, with no write of its own; and the replica's zone comes from {@code --zone} or
 * its Node. The Fabric8 mock server in CRUD mode, with a log of every request, and a manual clock.
 */
class ShardLeaseIT {
  private static final String LEASE_NS = "vigil-system";

  /** CRUD, and a log of each request's method and path. */
  static final class Recording extends KubernetesMixedDispatcher {
    final List<String> log = new CopyOnWriteArrayList<>();

    Recording(Map<ServerRequest, Queue<ServerResponse>> expectations) {
      super(expectations);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      log.add(request.getMethod() + " " + request.getPath());
      return super.dispatch(request);
    }

    long leaseWrites() {
      return log.stream().filter(r -> r.contains("/leases") && !r.startsWith("GET ")).count();
    }
  }

  private Recording recording;

  @AutoClose
  private final EmbeddedApiServer api =
      EmbeddedApiServer.start(
          expectations -> {
            recording = new Recording(expectations);
            return recording;
          });

  private final KubernetesClient client = api.client();
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

  private Lease stored(String identity) {
    return client.leases().inNamespace(LEASE_NS).withName(ShardLease.leaseName(identity)).get();
  }

  private static ShardConfig config(String identity) {
    return ShardConfig.of(identity, LEASE_NS, 15, 0);
  }

  @Test
  void theCreateAndEveryRenewalCarryTheCurrentZoneAndShareWithNoWriteOfTheirOwn() {
    AtomicReference<CheckerReport> report = new AtomicReference<>(new CheckerReport("eu-1a", 0));
    WriteBudget budget = WriteBudget.unlimited();
    ShardLease lease =
        new ShardLease(client, budget, config("a"), "a", now::get, () -> {}, report::get);
    lease.tick();
    assertThat(stored("a").getMetadata().getAnnotations())
        .containsEntry(CheckerReport.ZONE, "eu-1a")
        .containsEntry(CheckerReport.FAILING_SHARE, "0.000");

    report.set(new CheckerReport("eu-1a", 2.0 / 3));
    now.addAndGet(5_000);
    lease.tick();
    assertThat(stored("a").getMetadata().getAnnotations())
        .containsEntry(CheckerReport.FAILING_SHARE, "0.667");
    assertThat(ShardLease.millis(stored("a").getSpec().getRenewTime())).isEqualTo(now.get());

    report.set(new CheckerReport("eu-1a", 0.05));
    now.addAndGet(5_000);
    lease.tick();
    assertThat(stored("a").getMetadata().getAnnotations())
        .containsEntry(CheckerReport.FAILING_SHARE, "0.050");

    // the same three ticks of a Lease that carries nothing: as many writes, of the same kinds
    long carrying = recording.leaseWrites();
    ShardLease plain = new ShardLease(client, budget, config("b"), "b", now::get, () -> {});
    plain.tick();
    now.addAndGet(5_000);
    plain.tick();
    now.addAndGet(5_000);
    plain.tick();
    assertThat(carrying).as("a create and two renewals").isEqualTo(3);
    assertThat(recording.leaseWrites() - carrying).isEqualTo(carrying);
    assertThat(budget.granted(Priority.LEASE)).isEqualTo(6);
  }

  @Test
  void aRenewalKeepsTheLeasesOtherAnnotations() {
    ShardLease lease =
        new ShardLease(
            client,
            WriteBudget.unlimited(),
            config("a"),
            "a",
            now::get,
            () -> {},
            () -> new CheckerReport("z", 0.5));
    lease.tick();
    Lease l = stored("a");
    l.getMetadata().getAnnotations().put("example.com/owner", "team-x");
    client.leases().inNamespace(LEASE_NS).resource(l).update();
    now.addAndGet(5_000);
    lease.tick();
    assertThat(stored("a").getMetadata().getAnnotations())
        .containsEntry("example.com/owner", "team-x")
        .containsEntry(CheckerReport.FAILING_SHARE, "0.500");
  }

  @Test
  void theZoneIsTheFlagsElseTheNodesLabelElseUnknown() {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName("node-1")
                .addToLabels(ReplicaZone.LABEL, "eu-1b")
                .endMetadata()
                .build())
        .create();
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("node-2").endMetadata().build())
        .create();
    ShardConfig base = config("a");
    assertThat(ReplicaZone.resolve(withZone(base, "eu-1c", "node-1"), client)).isEqualTo("eu-1c");
    assertThat(ReplicaZone.resolve(withZone(base, null, "node-1"), client)).isEqualTo("eu-1b");
    assertThat(ReplicaZone.resolve(withZone(base, null, "node-2"), client))
        .as("no label")
        .isEmpty();
    assertThat(ReplicaZone.resolve(withZone(base, null, "node-9"), client)).as("no Node").isEmpty();
    assertThat(ReplicaZone.resolve(withZone(base, null, null), client))
        .as("no NODE_NAME")
        .isEmpty();
  }

  private static ShardConfig withZone(ShardConfig c, String zone, String node) {
    return new ShardConfig(
        c.enabled(),
        c.identity(),
        c.ring(),
        c.namespace(),
        c.leaseDurationSeconds(),
        c.movesPerMinuteFraction(),
        zone,
        node,
        null);
  }
}
