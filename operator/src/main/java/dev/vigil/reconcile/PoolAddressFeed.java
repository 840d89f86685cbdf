package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.passive.BackendAddresses;
import dev.vigil.runtime.PoolKey;
import dev.vigil.targets.TargetNetworks;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Keeps the OTLP receiver's {@link BackendAddresses} in step with the members of every pool in the
 * watched namespaces, whichever replica owns it (the BackendPool controller's informer sees only
 * this shard's pools; an OTLP record may name any pool's backend): its own informers of
 * BackendPools and of Pods (projected as the controller's are, {@link PodProjection}), members
 * resolved as the reconciler resolves them ({@link PoolMembers}: Pods with an IP, not finished, at
 * every Pod port the pool's ports target). Runs on the informers' threads; a Pod event recomputes
 * the pools of its namespace that select it, a pool event that pool. A pool of {@code spec.targets}
 * maps its static addresses; its hostname targets' answers are not indexed (their records are
 * {@code not_a_backend}).
 */
public final class PoolAddressFeed implements AutoCloseable {
  /** Fabric8's own index of every informer's objects by namespace. */
  private static final String BY_NAMESPACE =
      io.fabric8.kubernetes.client.informers.cache.Cache.NAMESPACE_INDEX;

  private final BackendAddresses addresses;
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private final List<SharedIndexInformer<BackendPool>> pools = new ArrayList<>();
  private final List<SharedIndexInformer<Pod>> pods = new ArrayList<>();

  private PoolAddressFeed(BackendAddresses addresses) {
    this.addresses = addresses;
  }

  /**
   * Starts informing (all namespaces when {@code namespaces} is empty); the index fills as the
   * informers sync.
   */
  public static PoolAddressFeed start(
      KubernetesClient client, Set<String> namespaces, BackendAddresses addresses) {
    PoolAddressFeed feed = new PoolAddressFeed(addresses);
    if (namespaces.isEmpty()) {
      feed.watch(
          client.resources(BackendPool.class).inAnyNamespace().runnableInformer(0),
          client.pods().inAnyNamespace().runnableInformer(0));
    } else {
      for (String ns : namespaces) {
        feed.watch(
            client.resources(BackendPool.class).inNamespace(ns).runnableInformer(0),
            client.pods().inNamespace(ns).runnableInformer(0));
      }
    }
    return feed;
  }

  private void watch(
      SharedIndexInformer<BackendPool> poolInformer, SharedIndexInformer<Pod> podInformer) {
    podInformer.itemStore(new TransformingItemStore<>(PodProjection::of));
    poolInformer.addEventHandler(
        handler((before, now) -> refresh(now), p -> addresses.remove(key(p))));
    podInformer.addEventHandler(handler(this::podChanged, p -> podChanged(null, p)));
    pools.add(poolInformer);
    pods.add(podInformer);
    informers.add(poolInformer);
    informers.add(podInformer);
    podInformer.start();
    poolInformer.start();
  }

  private static <T> ResourceEventHandler<T> handler(
      BiConsumer<T, T> changed, Consumer<T> deleted) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        changed.accept(null, obj);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        changed.accept(oldObj, newObj);
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        deleted.accept(obj);
      }
    };
  }

  /**
   * A Pod came, changed or went: the pools of its namespace that select it now or selected it
   * before recompute.
   */
  private void podChanged(Pod before, Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    for (SharedIndexInformer<BackendPool> informer : pools) {
      for (BackendPool pool : informer.getIndexer().byIndex(BY_NAMESPACE, ns)) {
        if (pool.getSpec() != null
            && (selects(pool, pod) || (before != null && selects(pool, before)))) {
          refresh(pool);
        }
      }
    }
  }

  private static boolean selects(BackendPool pool, Pod pod) {
    return LabelSelectors.matches(pool.getSpec().getSelector(), pod.getMetadata().getLabels());
  }

  /** Recomputes the pool's members from the Pods of its namespace. */
  private synchronized void refresh(BackendPool pool) {
    if (pool.getSpec() != null
        && pool.getSpec().getTargets() != null
        && TargetMembers.invalid(pool.getSpec(), null, TargetNetworks.NONE) == null) {
      // static addresses; a hostname target's answers are the owner's resolver's (not indexed)
      addresses.replace(
          key(pool),
          TargetMembers.members(
              pool.getSpec().getTargets(),
              pool.getSpec().getPorts() == null ? List.of() : pool.getSpec().getPorts(),
              null,
              Map.of(),
              Map.of(),
              TargetNetworks.NONE));
      return;
    }
    if (pool.getSpec() == null
        || pool.getSpec().getSelector() == null
        || pool.getSpec().getTargets() != null) {
      addresses.remove(key(pool));
      return;
    }
    String ns = pool.getMetadata().getNamespace();
    List<Pod> selected = new ArrayList<>();
    for (SharedIndexInformer<Pod> informer : pods) {
      for (Pod pod : informer.getIndexer().byIndex(BY_NAMESPACE, ns)) {
        if (selects(pool, pod)) {
          selected.add(pod);
        }
      }
    }
    addresses.replace(
        key(pool),
        PoolMembers.members(
            selected,
            pool.getSpec().getPorts() == null ? List.of() : pool.getSpec().getPorts(),
            null,
            !Boolean.FALSE.equals(pool.getSpec().getRespectPodReadiness()),
            Map.of()));
  }

  private static PoolKey key(BackendPool pool) {
    return new PoolKey(pool.getMetadata().getNamespace(), pool.getMetadata().getName());
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::close);
  }
}
