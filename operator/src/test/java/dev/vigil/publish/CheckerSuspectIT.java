package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.health.Confirmation;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code CheckerSuspect} through the real operator on the Fabric8 mock server (docs/design.md §8):
 * the replica turning Suspect, losing its last voter in another zone, and being trusted again each
 * reach the pool's status while every backend stays Up and no probe result changes anything.
 */
class CheckerSuspectIT {
  private static final String NS = "shop";

  @AutoClose private final MockCluster cluster = MockCluster.start();

  /** A replica's self-doubt as the test sets it; every backend passes, so no voter is asked. */
  private static final class Doubt implements Confirmer {
    volatile boolean suspect;
    volatile boolean voterInAnotherZone = true;

    @Override
    public Confirmation mode(PoolKey pool, HealthSettings settings) {
      if (!suspect) {
        return Confirmation.ALONE;
      }
      return voterInAnotherZone ? Confirmation.vote(50) : Confirmation.FREEZE;
    }

    @Override
    public Future<Map<String, Votes>> ask(
        PoolKey pool, HealthSettings settings, List<Member> backends) {
      return Future.succeededFuture(Map.of());
    }

    @Override
    public boolean suspect() {
      return suspect;
    }
  }

  private Optional<Condition> checkerSuspect() {
    BackendPool p =
        cluster.client().resources(BackendPool.class).inNamespace(NS).withName("web").get();
    if (p == null || p.getStatus() == null || p.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> "CheckerSuspect".equals(c.getType()))
        .findFirst();
  }

  private void awaitCondition(String status, String reason) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                checkerSuspect()
                    .filter(c -> status.equals(c.getStatus()) && reason.equals(c.getReason()))
                    .isPresent());
  }

  private int available() {
    return cluster
        .client()
        .resources(BackendPool.class)
        .inNamespace(NS)
        .withName("web")
        .get()
        .getStatus()
        .getAvailable();
  }

  @Test
  void eachFlipOfTheCheckersSelfDoubtIsWrittenToStatusWhileNoBackendChanges() {
    Doubt doubt = new Doubt();
    MockCluster.Replica replica = cluster.operator(MockCluster.config(NS));
    replica.running().runtimes().confirmWith(doubt);
    cluster.client().resource(Fixtures.policy(NS, "fast", "300ms", "250ms")).create();
    cluster.pods(NS, "web", 2, 10);
    cluster.client().resource(Fixtures.pool(NS, "web", "fast", "web", cluster.port())).create();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> checkerSuspect().isPresent() && available() == 2);
    awaitCondition("False", "Healthy");

    doubt.suspect = true;
    awaitCondition("True", "Confirming");
    assertThat(checkerSuspect().orElseThrow().getMessage())
        .contains("far above its peers'", "goes to the voters in other zones");

    doubt.voterInAnotherZone = false;
    awaitCondition("True", "Frozen");
    assertThat(checkerSuspect().orElseThrow().getMessage()).contains("publishes no new Down");

    doubt.suspect = false;
    awaitCondition("False", "Healthy");
    assertThat(available()).as("every backend stayed Up").isEqualTo(2);
  }
}
