package dev.vigil.shard;

import dev.vigil.api.v1alpha1.BackendPool;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * An owner's view of the pools (docs/design.md §7): JOSDK's BackendPool informer selects {@code
 * vigil.dev/shard=<identity>}, so a replica caches and reconciles only its own pools. A pool
 * assigned here arrives as an add, one moved away leaves as a delete. A label change alone does not
 * change a pool's generation, and JOSDK filters such updates out by default; here an update
 * reconciles when the generation or the shard named in status changed (the status write that hands
 * a pool over wakes its new owner; other status writes still do not reconcile). The sharder writes
 * the label ({@link #relabel}).
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

  /**
   * One JSON merge patch of a pool's {@code vigil.dev/shard} label, applied only to {@code
   * resourceVersion}.
   */
  static void relabel(
      KubernetesClient client,
      String namespace,
      String name,
      String shard,
      String resourceVersion) {
    Map<String, Object> metadata = new HashMap<>();
    metadata.put("labels", Map.of(ShardConfig.SHARD_LABEL, shard));
    metadata.put("resourceVersion", resourceVersion);
    // Patched through a pool that carries only its name: Fabric8 reads the pool from the server
    // before patching by name alone, a second round trip per move (ShardingE2E: the survivors
    // took a killed replica's 112 pools over at about 50 ms per pool, beyond the Lease + 5 s).
    BackendPool target = new BackendPool();
    target.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    client
        .resources(BackendPool.class)
        .inNamespace(namespace)
        .resource(target)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            client.getKubernetesSerialization().asJson(Map.of("metadata", metadata)));
  }
}
