package dev.vigil.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Writes a custom resource's status: skips the write when nothing a reader relies on changed (probe
 * times alone never cause a write), and coalesces to at most one write per interval per object.
 * Replaces the status subresource (a PUT of /status, which never touches spec) with the cached
 * resourceVersion; the response goes into JOSDK's cache so the next reconcile compares against what
 * was written. (JSON merge patch would do as well on a real API server; the Fabric8 mock server
 * merges lists in it, so the whole-status PUT keeps both identical.)
 */
public final class StatusWriter<S, R extends CustomResource<?, S>> {
  private final LongSupplier clock;
  private final long minIntervalMs;
  private final Runnable onWrite;
  private final WriteBudget budget;
  private final Map<String, Long> lastWrite = new ConcurrentHashMap<>();

  /**
   * @param onWrite told after each write (metrics)
   */
  public StatusWriter(
      LongSupplier clock, long minIntervalMs, WriteBudget budget, Runnable onWrite) {
    this.clock = clock;
    this.minIntervalMs = minIntervalMs;
    this.budget = budget;
    this.onWrite = onWrite;
  }

  /**
   * @return empty when written or nothing to write; otherwise how long until the write is due (the
   *     caller reschedules its reconcile)
   */
  public Optional<Duration> write(Context<R> context, R resource, S status)
      throws InterruptedException {
    // Through JOSDK, so the next reconcile reads this write from the cache. Optimistic locking on
    // the cached resourceVersion: a conflict fails the reconcile, which JOSDK retries with backoff.
    return write(c -> context.resourceOperations().updatePrimaryStatus(c), resource, status);
  }

  /**
   * As {@link #write(Context, CustomResource, Object)}, with the status PUT given.
   *
   * @param updateStatus replaces the status subresource of the copy it is given
   */
  public Optional<Duration> write(java.util.function.Consumer<R> updateStatus, R resource, S status)
      throws InterruptedException {
    if (materiallyEqual(resource.getStatus(), status)) {
      return Optional.empty();
    }
    String key = key(resource.getMetadata().getNamespace(), resource.getMetadata().getName());
    long now = clock.getAsLong();
    Long last = lastWrite.get(key);
    if (last != null && now - last < minIntervalMs) {
      return Optional.of(Duration.ofMillis(minIntervalMs - (now - last)));
    }
    R copy = Serialization.clone(resource);
    copy.setStatus(status);
    budget.acquire(WriteBudget.Priority.STATUS, resource.getMetadata().getNamespace());
    updateStatus.accept(copy);
    lastWrite.put(key, now);
    onWrite.run();
    return Optional.empty();
  }

  public void forget(String namespace, String name) {
    lastWrite.remove(key(namespace, name));
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }

  /** Equal but for probe timings ({@code backends[].lastProbe}). */
  static boolean materiallyEqual(Object a, Object b) {
    if (a == null || b == null) {
      return a == b;
    }
    return withoutProbeTimes(a).equals(withoutProbeTimes(b));
  }

  private static JsonNode withoutProbeTimes(Object status) {
    JsonNode tree = Serialization.jsonMapper().valueToTree(status);
    JsonNode backends = tree.get("backends");
    if (backends != null && backends.isArray()) {
      for (JsonNode b : backends) {
        ((ObjectNode) b).remove("lastProbe");
      }
    }
    return tree;
  }
}
