package dev.vigil.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.javaoperatorsdk.operator.api.config.informer.InformerConfiguration;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.event.source.PrimaryToSecondaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * An informer event source configuration whose every informer gets a store of its own.
 *
 * <p>Why (issue 31, item 4; the cause of commit 04f0603's empty slices): JOSDK 5.3.2 runs one
 * Fabric8 informer per watched namespace and hands each of them the configuration's {@code
 * getItemStore()}, one instance. When an informer's list completes, Fabric8's {@code
 * ProcessorStore.syncList} removes every key of its store that was not in that list, so with two
 * watched namespaces the informer that synced last deleted the other namespace's objects from the
 * shared store. Pods vanished (a pool's slice went empty once its runtime saw no members), and
 * foreign slices and leftover Endpoints of the other namespaces were no longer seen. Watching all
 * namespaces, one informer, hid it. {@code NamespaceCachesIT} fails on it.
 *
 * <p>This configuration answers {@code getItemStore()} with a fresh store per call; JOSDK calls it
 * once per informer it creates (InformerManager), and nowhere else.
 */
final class StorePerInformer<R extends HasMetadata> implements InformerEventSourceConfiguration<R> {
  private final InformerEventSourceConfiguration<R> built;
  private final InformerConfiguration<R> informer;

  private StorePerInformer(
      InformerEventSourceConfiguration<R> built, Supplier<ItemStore<R>> store) {
    this.built = built;
    this.informer = new FreshStores<>(built.getInformerConfig(), store);
  }

  /** {@code built}, with a new store from {@code store} for each informer. */
  static <R extends HasMetadata> InformerEventSourceConfiguration<R> of(
      InformerEventSourceConfiguration<R> built, Supplier<ItemStore<R>> store) {
    return new StorePerInformer<>(built, store);
  }

  @Override
  public InformerConfiguration<R> getInformerConfig() {
    return informer;
  }

  @Override
  public SecondaryToPrimaryMapper<R> getSecondaryToPrimaryMapper() {
    return built.getSecondaryToPrimaryMapper();
  }

  @Override
  public <P extends HasMetadata> PrimaryToSecondaryMapper<P> getPrimaryToSecondaryMapper() {
    return built.getPrimaryToSecondaryMapper();
  }

  @Override
  public Optional<GroupVersionKind> getGroupVersionKind() {
    return built.getGroupVersionKind();
  }

  @Override
  public Optional<KubernetesClient> getKubernetesClient() {
    return built.getKubernetesClient();
  }

  @Override
  public boolean followControllerNamespaceChanges() {
    return built.followControllerNamespaceChanges();
  }

  @Override
  public String name() {
    return built.name();
  }

  /** The built informer configuration, with a store made per call. */
  private static final class FreshStores<R extends HasMetadata> extends InformerConfiguration<R> {
    private final Supplier<ItemStore<R>> store;

    FreshStores(InformerConfiguration<R> c, Supplier<ItemStore<R>> store) {
      super(
          c.getResourceClass(),
          c.getName(),
          c.getNamespaces(),
          c.getFollowControllerNamespaceChanges(),
          c.getLabelSelector(),
          c.getOnAddFilter(),
          c.getOnUpdateFilter(),
          c.getOnDeleteFilter(),
          c.getGenericFilter(),
          null,
          c.getInformerListLimit(),
          c.getFieldSelector(),
          c.isComparableResourceVersions(),
          c.getGhostResourceCacheCheckInterval());
      this.store = store;
    }

    @Override
    public ItemStore<R> getItemStore() {
      return store.get();
    }
  }
}
