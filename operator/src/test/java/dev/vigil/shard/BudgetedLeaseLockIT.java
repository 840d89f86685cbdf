package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.demo.EmbeddedApiServer;
import dev.vigil.publish.WriteBudget;
import dev.vigil.publish.WriteBudget.Priority;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The sharder's election (Fabric8's {@code LeaderElector}, as {@link ShardRing} builds it) against
 * the Fabric8 mock server: every write of its Lease takes a LEASE token of the one write budget,
 * and none waits for it, even with the bucket drained by slice writes and its clock standing still.
 */
class BudgetedLeaseLockIT {
  @AutoClose private final EmbeddedApiServer api = EmbeddedApiServer.start();
  private final KubernetesClient client = api.client();

  @Test
  void theElectorsCreateAndRenewalsTakeLeaseTokensAndNeverWait() throws Exception {
    WriteBudget drained = new WriteBudget(1, 1, () -> 0L);
    drained.acquire(Priority.SLICE, "shop");
    AtomicBoolean leading = new AtomicBoolean();
    CompletableFuture<?> election =
        client
            .leaderElector()
            .withConfig(
                new LeaderElectionConfigBuilder()
                    .withName("test")
                    .withLock(
                        new BudgetedLeaseLock(
                            new LeaseLock("vigil-system", "vigil-leader", "a"), drained))
                    .withLeaseDuration(Duration.ofSeconds(3))
                    .withRenewDeadline(Duration.ofSeconds(2))
                    .withRetryPeriod(Duration.ofMillis(200))
                    .withLeaderCallbacks(
                        new LeaderCallbacks(() -> leading.set(true), () -> {}, who -> {}))
                    .build())
            .build()
            .start();
    try {
      await().atMost(Duration.ofSeconds(20)).until(leading::get);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> drained.granted(Priority.LEASE) >= 3); // create, then renewals
      assertThat(client.leases().inNamespace("vigil-system").withName("vigil-leader").get())
          .isNotNull();
      assertThat(drained.granted(Priority.SLICE)).as("no token was earned").isEqualTo(1);
    } finally {
      election.cancel(true);
    }
  }
}
