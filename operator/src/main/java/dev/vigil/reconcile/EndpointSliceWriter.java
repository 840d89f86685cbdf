package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPool;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ResourceOperations;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Makes a Service's Vigil-managed EndpointSlices equal the desired ones, writing only the slices
 * whose content changed and deleting surplus ones. Nothing changed: zero writes.
 */
public final class EndpointSliceWriter {
  /** What one call wrote. */
  public record Writes(int created, int updated, int deleted) {
    public int total() {
      return created + updated + deleted;
    }
  }

  private final KubernetesClient client;
  private final Supplier<InformerEventSource<EndpointSlice, BackendPool>> cache;

  /**
   * @param cache the slice informer: writes go through JOSDK into it, so the next reconcile sees
   *     them even before the watch delivers them
   */
  public EndpointSliceWriter(
      KubernetesClient client, Supplier<InformerEventSource<EndpointSlice, BackendPool>> cache) {
    this.client = client;
    this.cache = cache;
  }

  /**
   * @param desired from {@link EndpointSliceDesired}
   * @param current the slices Vigil wrote for this Service (from the informer cache)
   */
  public Writes apply(
      Context<BackendPool> context, List<EndpointSlice> desired, List<EndpointSlice> current) {
    ResourceOperations<BackendPool> ops = context.resourceOperations();
    Map<String, EndpointSlice> existing = new HashMap<>();
    for (EndpointSlice slice : current) {
      existing.put(slice.getMetadata().getName(), slice);
    }
    int created = 0;
    int updated = 0;
    int deleted = 0;
    for (EndpointSlice want : desired) {
      EndpointSlice have = freshest(existing.remove(want.getMetadata().getName()));
      if (have == null) {
        created += create(ops, want);
      } else if (!Objects.equals(have.getAddressType(), want.getAddressType())) {
        client.resource(have).delete();
        deleted++;
        created += create(ops, want);
      } else if (!sameContent(have, want)) {
        updated += update(ops, want, have);
      }
    }
    for (EndpointSlice surplus : existing.values()) {
      client.resource(surplus).delete();
      deleted++;
    }
    return new Writes(created, updated, deleted);
  }

  /** The informer's list can lag this writer's own last write; JOSDK's cache has it. */
  private EndpointSlice freshest(EndpointSlice listed) {
    if (listed == null) {
      return null;
    }
    return cache.get().get(ResourceID.fromResource(listed)).orElse(listed);
  }

  /**
   * Creates a slice; when it already exists (created by an earlier reconcile the informer has not
   * delivered yet), makes the live one equal instead.
   */
  private int create(ResourceOperations<BackendPool> ops, EndpointSlice want) {
    try {
      ops.create(want, cache.get());
      return 1;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      EndpointSlice live = client.resource(want).get();
      return live == null || sameContent(live, want) ? 0 : update(ops, want, live);
    }
  }

  /**
   * Updates on the given resourceVersion; on a conflict (a cache that lagged this writer's own
   * write) reads the live slice once and retries, so a transition is published now, not after a
   * reconcile backoff.
   */
  private int update(ResourceOperations<BackendPool> ops, EndpointSlice want, EndpointSlice have) {
    want.getMetadata().setResourceVersion(have.getMetadata().getResourceVersion());
    try {
      ops.update(want, cache.get());
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
      ops.update(want, cache.get());
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
