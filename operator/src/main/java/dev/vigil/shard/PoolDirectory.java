package dev.vigil.shard;

import dev.vigil.api.v1alpha1.BackendPool;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which shard owns each BackendPool, on every replica (docs/passive.md, "Routing between
 * replicas"): a watch of all pools (of the operator's namespaces) that keeps only each pool's
 * labels, so a replica that takes a reporter's batch for a pool it does not own can name the owner
 * from its cache, with no API read per request. The owner is the pool's {@code vigil.dev/shard}
 * label, the sharder's own record of its assignment.
 */
public final class PoolDirectory implements AutoCloseable {
  private final List<SharedIndexInformer<BackendPool>> informers = new ArrayList<>();

  /** Watches the pools of {@code namespaces} (empty: all). */
  public PoolDirectory(KubernetesClient client, Set<String> namespaces) {
    for (var source : sources(client, namespaces)) {
      SharedIndexInformer<BackendPool> informer = source.runnableInformer(0);
      informer.itemStore(
          new ReducedStateItemStore<>(
              ReducedStateItemStore.NAME_KEY_STATE,
              BackendPool.class,
              client.getKubernetesSerialization(),
              "metadata.labels"));
      informers.add(informer);
    }
  }

  /** The pools to watch: in every namespace, or in each watched one (the sharder's too). */
  static List<FilterWatchListDeletable<BackendPool, ?, ?>> sources(
      KubernetesClient client, Set<String> namespaces) {
    List<FilterWatchListDeletable<BackendPool, ?, ?>> sources = new ArrayList<>();
    if (namespaces.isEmpty()) {
      sources.add(client.resources(BackendPool.class).inAnyNamespace());
    } else {
      namespaces.forEach(ns -> sources.add(client.resources(BackendPool.class).inNamespace(ns)));
    }
    return sources;
  }

  /** Starts the watches (without waiting for their lists). */
  public PoolDirectory start() {
    informers.forEach(SharedIndexInformer::start);
    return this;
  }

  /** Whether every watch has listed. */
  public boolean synced() {
    return informers.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  /**
   * The pool's owner: empty when the pool is unknown (not listed yet, or no such pool); "" when it
   * exists but no shard is assigned yet.
   */
  public Optional<String> owner(String namespace, String name) {
    for (SharedIndexInformer<BackendPool> informer : informers) {
      BackendPool p = informer.getStore().getByKey(namespace + "/" + name);
      if (p != null) {
        var labels = p.getMetadata().getLabels();
        String shard = labels == null ? null : labels.get(ShardConfig.SHARD_LABEL);
        return Optional.of(shard == null ? "" : shard);
      }
    }
    return Optional.empty();
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::stop);
  }
}
