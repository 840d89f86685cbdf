package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.source.informer.ManagedInformerEventSource;
import java.util.function.Supplier;

/** Creates the selector-less Service of a pool, and keeps the ports of one Vigil created. */
public final class ServiceWriter {
  private final KubernetesClient client;
  private final WriteCounter counter;
  private final WriteBudget budget;
  private final Supplier<ManagedInformerEventSource<Service, ?, ?>> cache;

  /**
   * @param budget Service writes publish, like slice writes: they take {@link
   *     WriteBudget.Priority#SLICE} tokens
   * @param cache the Service informer: a create goes into its cache at once, so the next reconcile
   *     of the pool sees the Service even before the watch delivers it
   */
  public ServiceWriter(
      KubernetesClient client,
      WriteCounter counter,
      WriteBudget budget,
      Supplier<ManagedInformerEventSource<Service, ?, ?>> cache) {
    this.client = client;
    this.counter = counter;
    this.budget = budget;
    this.cache = cache;
  }

  /**
   * @param live the Service as it is, or null
   * @param desired what Vigil would create
   * @param manage the pool may create and own the Service
   * @return the Service slices should follow
   */
  public Service ensure(Service live, Service desired, boolean manage) throws InterruptedException {
    if (live == null) {
      try {
        budget.acquire(WriteBudget.Priority.SLICE, desired.getMetadata().getNamespace());
        counter.services(1);
        return cache
            .get()
            .eventFilteringUpdateAndCacheResource(desired, s -> client.resource(s).create());
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        // Created by an earlier reconcile the informer has not delivered yet.
        live = client.resource(desired).get();
      }
    }
    boolean ours =
        live.getMetadata().getLabels() != null
            && desired
                .getMetadata()
                .getLabels()
                .get(ServiceDesired.LABEL_POOL)
                .equals(live.getMetadata().getLabels().get(ServiceDesired.LABEL_POOL));
    if (manage && ours && !ServiceDesired.samePorts(live, desired)) {
      budget.acquire(WriteBudget.Priority.SLICE, desired.getMetadata().getNamespace());
      counter.services(1);
      return client
          .services()
          .inNamespace(live.getMetadata().getNamespace())
          .withName(live.getMetadata().getName())
          .edit(
              s -> {
                s.getSpec().setPorts(desired.getSpec().getPorts());
                return s;
              });
    }
    return live;
  }
}
