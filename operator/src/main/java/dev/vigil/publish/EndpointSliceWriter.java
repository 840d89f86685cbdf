package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Makes a Service's Vigil-managed EndpointSlices equal the desired ones, writing only the slices
 * whose content changed and deleting surplus ones. Nothing changed: zero writes.
 *
 * <p>Every create and update goes through JOSDK's {@code eventFilteringUpdateAndCacheResource}: the
 * slice informer's cache holds the writer's own last write (with its resourceVersion) until the
 * watch delivers it, and the watch event of the write itself triggers no reconcile. Each write
 * takes a {@link WriteBudget.Priority#SLICE} token first. The only reads are after a 409 (someone
 * else wrote the slice, or a cache that lost a race): one GET, then one retry.
 */
public final class EndpointSliceWriter {
  /**
   * A create or update through the slice informer's cache: JOSDK's {@code
   * eventFilteringUpdateAndCacheResource} in the operator, the plain call in tests.
   */
  @FunctionalInterface
  public interface WriteThrough {
    EndpointSlice write(EndpointSlice slice, java.util.function.UnaryOperator<EndpointSlice> call);
  }

  /** What one call wrote. */
  public record Writes(int created, int updated, int deleted) {
    public int total() {
      return created + updated + deleted;
    }
  }

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final WriteCounter counter;

  public EndpointSliceWriter(KubernetesClient client, WriteBudget budget, WriteCounter counter) {
    this.client = client;
    this.budget = budget;
    this.counter = counter;
  }

  /**
   * @param cache writes through the informer of Vigil's slices
   * @param desired from {@link EndpointSliceDesired}
   * @param current the slices Vigil wrote for this Service, as fresh as the cache has them
   */
  public Writes apply(WriteThrough cache, List<EndpointSlice> desired, List<EndpointSlice> current)
      throws InterruptedException {
    Map<String, EndpointSlice> existing = new HashMap<>();
    for (EndpointSlice slice : current) {
      existing.put(slice.getMetadata().getName(), slice);
    }
    int created = 0;
    int updated = 0;
    int deleted = 0;
    for (EndpointSlice want : desired) {
      EndpointSlice have = existing.remove(want.getMetadata().getName());
      if (have == null) {
        created += create(cache, want);
      } else if (!Objects.equals(have.getAddressType(), want.getAddressType())) {
        delete(have);
        deleted++;
        created += create(cache, want);
      } else if (!sameContent(have, want)) {
        updated += update(cache, want, have);
      }
    }
    for (EndpointSlice surplus : existing.values()) {
      delete(surplus);
      deleted++;
    }
    return new Writes(created, updated, deleted);
  }

  private void delete(EndpointSlice slice) throws InterruptedException {
    budget.acquire(WriteBudget.Priority.SLICE, slice.getMetadata().getNamespace());
    counter.slices(1);
    client.resource(slice).delete();
  }

  /** One create or update: a token, a count, and the write through JOSDK's cache. */
  private void write(
      WriteThrough cache, EndpointSlice want, java.util.function.UnaryOperator<EndpointSlice> call)
      throws InterruptedException {
    budget.acquire(WriteBudget.Priority.SLICE, want.getMetadata().getNamespace());
    counter.slices(1);
    cache.write(want, call);
  }

  /** Creates a slice; when it already exists, makes the live one equal instead. */
  private int create(WriteThrough cache, EndpointSlice want) throws InterruptedException {
    try {
      write(cache, want, w -> client.resource(w).create());
      return 1;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      EndpointSlice live = client.resource(want).get();
      return live == null || sameContent(live, want) ? 0 : update(cache, want, live);
    }
  }

  /**
   * Updates on the given resourceVersion; on a conflict reads the live slice once and retries, so a
   * transition is published now, not after a backoff.
   */
  private int update(WriteThrough cache, EndpointSlice want, EndpointSlice have)
      throws InterruptedException {
    want.getMetadata().setResourceVersion(have.getMetadata().getResourceVersion());
    try {
      write(cache, want, w -> client.resource(w).update());
      return 1;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      EndpointSlice live = client.resource(want).get();
      if (live == null || sameContent(live, want)) {
        return 0;
      }
      want.getMetadata().setResourceVersion(live.getMetadata().getResourceVersion());
      write(cache, want, w -> client.resource(w).update());
      return 1;
    }
  }

  /** Compares what Vigil owns in a slice; server-set metadata is ignored. */
  static boolean sameContent(EndpointSlice have, EndpointSlice want) {
    return Objects.equals(have.getEndpoints(), want.getEndpoints())
        && Objects.equals(have.getPorts(), want.getPorts())
        && Objects.equals(have.getMetadata().getLabels(), want.getMetadata().getLabels())
        && Objects.equals(
            have.getMetadata().getOwnerReferences(), want.getMetadata().getOwnerReferences());
  }
}
