package dev.vigil.shard;

import dev.vigil.api.v1alpha1.BackendPool;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.HashMap;
import java.util.Map;

/**
 * The owner's side of a planned move (DESIGN §7): a pool labelled {@code vigil.dev/drain=<target>}
 * is handed over once the owner has stopped probing it and flushed its status; the owner then
 * acknowledges with one JSON merge patch that names the target as the pool's shard and removes the
 * drain label (so a move costs two API writes: the sharder's drain and this). The patch carries the
 * resourceVersion it was read at: if the sharder changed its mind in between, the API server
 * refuses it and the next reconcile sees the new labels.
 */
public final class PoolHandoff {
  private final KubernetesClient client;
  private final String identity;
  private final java.util.function.BooleanSupplier writable;

  /**
   * @param writable whether this replica holds its shard Lease (else it must not run pools)
   */
  public PoolHandoff(
      KubernetesClient client, String identity, java.util.function.BooleanSupplier writable) {
    this.client = client;
    this.identity = identity;
    this.writable = writable;
  }

  /** False while this replica does not hold its shard Lease: it must not start or run pools. */
  public boolean mayRun() {
    return writable.getAsBoolean();
  }

  /** This replica's shard name. */
  public String identity() {
    return identity;
  }

  /** The target of a drain of this pool away from this shard, or null. */
  public String drainTarget(BackendPool pool) {
    Map<String, String> labels = pool.getMetadata().getLabels();
    if (labels == null || !identity.equals(labels.get(ShardConfig.SHARD_LABEL))) {
      return null;
    }
    String to = labels.get(ShardConfig.DRAIN_LABEL);
    return to == null || to.equals(identity) ? null : to;
  }

  /** Relabels the pool to the drain's target and removes the drain label. */
  public void acknowledge(BackendPool pool, String target) {
    Map<String, Object> labels = new HashMap<>();
    labels.put(ShardConfig.SHARD_LABEL, target);
    labels.put(ShardConfig.DRAIN_LABEL, null);
    patchLabels(
        client, pool.getMetadata().getNamespace(), pool.getMetadata().getName(), labels, null);
  }

  /**
   * One JSON merge patch of a pool's labels (a null value removes the label); with {@code
   * resourceVersion} it applies only to that version. The sharder's and the owner's writes.
   */
  static void patchLabels(
      KubernetesClient client,
      String namespace,
      String name,
      Map<String, Object> labels,
      String resourceVersion) {
    Map<String, Object> metadata = new HashMap<>();
    metadata.put("labels", labels);
    if (resourceVersion != null) {
      metadata.put("resourceVersion", resourceVersion);
    }
    // Patched through a pool that carries only its name: Fabric8 reads the pool from the server
    // before patching by name alone, a second round trip per move (ShardingE2E: the survivors
    // took a killed replica's 112 pools over at about 50 ms per pool, beyond the Lease + 5 s).
    BackendPool target = new BackendPool();
    target.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(name)
            .withNamespace(namespace)
            .build());
    client
        .resources(BackendPool.class)
        .inNamespace(namespace)
        .resource(target)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            client.getKubernetesSerialization().asJson(Map.of("metadata", metadata)));
  }
}
