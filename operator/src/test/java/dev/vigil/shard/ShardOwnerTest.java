package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.shard.ShardPlanner.ShardState;
import dev.vigil.testing.Fixtures;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ShardOwnerTest {
  private static BackendPool pool(long generation, Map<String, String> labels, String inStatus) {
    BackendPool p = Fixtures.pool("shop", "web", "fast", "web", 8080);
    p.getMetadata().setGeneration(generation);
    p.getMetadata().setLabels(labels);
    if (inStatus != null) {
      BackendPoolStatus status = new BackendPoolStatus();
      status.setShard(inStatus);
      p.setStatus(status);
    }
    return p;
  }

  @Test
  void aSpecChangeOrAHandoverReconcilesOtherStatusWritesAndLabelsDoNot() {
    BackendPool owned = pool(1, Map.of(ShardConfig.SHARD_LABEL, "a"), "a");
    assertThat(ShardOwner.reconciles(pool(1, Map.of(ShardConfig.SHARD_LABEL, "a"), "a"), owned))
        .as("a status write (same generation, same shard in status)")
        .isFalse();
    assertThat(ShardOwner.reconciles(pool(2, Map.of(ShardConfig.SHARD_LABEL, "a"), "a"), owned))
        .as("a spec change")
        .isTrue();
    BackendPool waiting = pool(1, Map.of(ShardConfig.SHARD_LABEL, "a"), "b");
    assertThat(ShardOwner.reconciles(owned, waiting))
        .as("the old owner's handover (status names this shard now)")
        .isTrue();
    assertThat(
            ShardOwner.reconciles(
                pool(1, Map.of(ShardConfig.SHARD_LABEL, "a", "x", "y"), "a"), owned))
        .as("another label")
        .isFalse();
  }

  @Test
  void aNewOwnerWaitsWhileTheShardInStatusHoldsItsLeaseAndNotOnceItIsGone() {
    Map<String, ShardState> states = new HashMap<>();
    AtomicLong now = new AtomicLong();
    PoolHandoff a =
        new PoolHandoff(
            null, "a", () -> true, s -> Optional.ofNullable(states.get(s)), now::get, 15_000);
    Map<String, String> label = Map.of(ShardConfig.SHARD_LABEL, "a");
    assertThat(a.awaitedOwner(pool(1, label, null))).as("never owned").isNull();
    assertThat(a.awaitedOwner(pool(1, label, "a"))).as("handed over to a").isNull();
    assertThat(a.awaitedOwner(pool(1, label, "b")))
        .as("b's Lease not listed yet: wait")
        .isEqualTo("b");
    states.put("b", ShardState.LIVE);
    assertThat(a.awaitedOwner(pool(1, label, "b"))).as("b live: wait").isEqualTo("b");
    states.put("b", ShardState.EXPIRED);
    now.set(14_999);
    assertThat(a.awaitedOwner(pool(1, label, "b")))
        .as("b expired but not fenced: it may still write, wait")
        .isEqualTo("b");
    states.put("b", ShardState.GONE);
    assertThat(a.awaitedOwner(pool(1, label, "b"))).as("b fenced or released").isNull();
  }

  @Test
  void aNewOwnerStopsWaitingForALiveShardAfterALeaseDuration() {
    AtomicLong now = new AtomicLong(1_000);
    PoolHandoff a =
        new PoolHandoff(null, "a", () -> true, s -> Optional.of(ShardState.LIVE), now::get, 15_000);
    BackendPool arriving = pool(1, Map.of(ShardConfig.SHARD_LABEL, "a"), "b");
    assertThat(a.awaitedOwner(arriving)).isEqualTo("b");
    now.set(15_999);
    assertThat(a.awaitedOwner(arriving)).as("14.999 s").isEqualTo("b");
    now.set(16_000);
    assertThat(a.awaitedOwner(arriving))
        .as("a live shard that has not handed over in a Lease duration never had the pool")
        .isNull();
    a.forget(new dev.vigil.runtime.PoolKey("shop", "web"));
    assertThat(a.awaitedOwner(arriving)).as("arriving again: a new wait").isEqualTo("b");
  }
}
