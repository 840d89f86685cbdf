package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.testing.Fixtures;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShardOwnerTest {
  private static BackendPool pool(long generation, Map<String, String> labels) {
    BackendPool p = Fixtures.pool("shop", "web", "fast", "web", 8080);
    p.getMetadata().setGeneration(generation);
    p.getMetadata().setLabels(labels);
    return p;
  }

  @Test
  void aSpecChangeOrADrainReconcilesAStatusWriteDoesNot() {
    BackendPool owned = pool(1, Map.of(ShardConfig.SHARD_LABEL, "a"));
    assertThat(ShardOwner.reconciles(pool(1, Map.of(ShardConfig.SHARD_LABEL, "a")), owned))
        .as("a status write (same generation, same labels)")
        .isFalse();
    assertThat(ShardOwner.reconciles(pool(2, Map.of(ShardConfig.SHARD_LABEL, "a")), owned))
        .as("a spec change")
        .isTrue();
    assertThat(
            ShardOwner.reconciles(
                pool(1, Map.of(ShardConfig.SHARD_LABEL, "a", ShardConfig.DRAIN_LABEL, "b")), owned))
        .as("the sharder's drain")
        .isTrue();
    assertThat(
            ShardOwner.reconciles(pool(1, Map.of(ShardConfig.SHARD_LABEL, "a", "x", "y")), owned))
        .as("another label")
        .isFalse();
  }

  @Test
  void theOwnerHandsOverOnlyItsOwnPoolsToAnotherShard() {
    PoolHandoff a = new PoolHandoff(null, "a", () -> true);
    assertThat(
            a.drainTarget(
                pool(1, Map.of(ShardConfig.SHARD_LABEL, "a", ShardConfig.DRAIN_LABEL, "b"))))
        .isEqualTo("b");
    assertThat(
            a.drainTarget(
                pool(1, Map.of(ShardConfig.SHARD_LABEL, "c", ShardConfig.DRAIN_LABEL, "b"))))
        .isNull();
    assertThat(
            a.drainTarget(
                pool(1, Map.of(ShardConfig.SHARD_LABEL, "a", ShardConfig.DRAIN_LABEL, "a"))))
        .isNull();
    assertThat(a.drainTarget(pool(1, Map.of(ShardConfig.SHARD_LABEL, "a")))).isNull();
  }
}
