package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.passive.BackendAddresses;
import dev.vigil.runtime.PoolKey;
import dev.vigil.targets.TargetNetworks;
import dev.vigil.targets.TargetResolver;
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
 * maps its static addresses and the addresses its hostnames resolve to here: this replica resolves
 * them itself ({@code names}, a resolver of its own beside the owner's), because a record is mapped
 * on the replica that received it, before it is routed to the pool's owner, so answers known only
 * to the owner would map only the records that happen to reach it. A name's answer that changes
 * recomputes its pool (on the resolver's thread); {@link #resolveDue} asks again for names whose
 * answer is due (their TTL, bounded 5 s..5 min), as the owner's reconciles do.
 */
public final class PoolAddressFeed implements AutoCloseable {
  /** Fabric8's own index of every informer's objects by namespace. */
  private static final String BY_NAMESPACE =
      io.fabric8.kubernetes.client.informers.cache.Cache.NAMESPACE_INDEX;

  private final BackendAddresses addresses;
  private final TargetResolver names;
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private final List<SharedIndexInformer<BackendPool>> pools = new ArrayList<>();
  private final List<SharedIndexInformer<Pod>> pods = new ArrayList<>();

  private PoolAddressFeed(BackendAddresses addresses, TargetResolver names) {
    this.addresses = addresses;
    this.names = names;
    names.onChange(this::namesChanged);
  }

  /**
   * Starts informing (all namespaces when {@code namespaces} is empty); the index fills as the
   * informers sync. {@code names} resolves the pools' hostname targets for the index (closed with
   * the feed).
   */
  public static PoolAddressFeed start(
      KubernetesClient client,
      Set<String> namespaces,
      BackendAddresses addresses,
      TargetResolver names) {
    PoolAddressFeed feed = new PoolAddressFeed(addresses, names);
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
    poolInformer.addEventHandler(handler((before, now) -> refresh(now), this::removed));
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

  private void removed(BackendPool pool) {
    names.forget(key(pool));
    addresses.remove(key(pool));
  }

  /** A hostname's answer changed: its pool recomputes, if the informers still hold it. */
  private void namesChanged(PoolKey key) {
    for (SharedIndexInformer<BackendPool> informer : pools) {
      BackendPool pool = informer.getIndexer().getByKey(key.namespace() + "/" + key.name());
      if (pool != null) {
        refresh(pool);
        return;
      }
    }
  }

  /**
   * Asks again for the hostnames whose answer is due (the resolver starts only those lookups);
   * called every few seconds. Changed answers come back through {@link #namesChanged}.
   */
  public void resolveDue() {
    for (SharedIndexInformer<BackendPool> informer : pools) {
      for (BackendPool pool : informer.getStore().list()) {
        if (pool.getSpec() != null
            && pool.getSpec().getTargets() != null
            && !TargetMembers.hostnames(pool.getSpec().getTargets()).isEmpty()) {
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
      // static addresses, and the hostnames' answers as this replica resolves them
      TargetResolver.Resolution resolved =
          names.resolve(key(pool), TargetMembers.hostnames(pool.getSpec().getTargets()));
      addresses.replace(
          key(pool),
          TargetMembers.members(
              pool.getSpec().getTargets(),
              pool.getSpec().getPorts() == null ? List.of() : pool.getSpec().getPorts(),
              null,
              resolved.names(),
              Map.of(),
              names.refused()));
      return;
    }
    if (pool.getSpec() == null
        || pool.getSpec().getSelector() == null
        || pool.getSpec().getTargets() != null) {
      names.forget(key(pool));
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
    names.close();
  }
}
