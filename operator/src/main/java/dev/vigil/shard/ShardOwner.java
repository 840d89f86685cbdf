package dev.vigil.shard;

import dev.vigil.api.v1alpha1.BackendPool;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import java.util.Objects;

/**
 * An owner's view of the pools (docs/design.md §7): JOSDK's BackendPool informer selects {@code
 * vigil.dev/shard=<identity>}, so a replica caches and reconciles only its own pools. A pool
 * assigned here arrives as an add, one moved away leaves as a delete. A label change alone does not
 * change a pool's generation, and JOSDK filters such updates out by default; here an update
 * reconciles when the generation or the shard named in status changed (the status write that hands
 * a pool over wakes its new owner; other status writes still do not reconcile).
 */
public final class ShardOwner {
  private ShardOwner() {}

  /** Restricts the BackendPool controller to this shard's pools. */
  public static void configure(ControllerConfigurationOverrider<BackendPool> c, String identity) {
    c.withLabelSelector(ShardConfig.SHARD_LABEL + "=" + identity)
        .withGenerationAware(false)
        .withOnUpdateFilter(ShardOwner::reconciles);
  }

  /** An update reconciles when the spec (generation) or the shard in status changed. */
  static boolean reconciles(BackendPool now, BackendPool before) {
    return !Objects.equals(now.getMetadata().getGeneration(), before.getMetadata().getGeneration())
        || !Objects.equals(shard(now), shard(before));
  }

  private static String shard(BackendPool pool) {
    return pool.getStatus() == null ? null : pool.getStatus().getShard();
  }
}
