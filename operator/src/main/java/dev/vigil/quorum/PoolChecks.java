package dev.vigil.quorum;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.reconcile.PolicyResolver;
import dev.vigil.reconcile.ProbeTlsObjects;
import dev.vigil.reconcile.ProbeTlsSources;
import dev.vigil.reconcile.ResolvedPolicy;
import dev.vigil.reconcile.TenantFloors;
import dev.vigil.runtime.PoolKey;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A voter's view of the pools it is asked about: the pool's HealthPolicy, resolved by the same
 * {@link PolicyResolver} and floors as the owner's, read from the API (the pool, then its policy;
 * each a list by name, which the chart's RBAC allows where it does not allow a get) on a worker and
 * kept for {@value #TTL_MS} ms, so a burst of questions about one pool costs two reads. A voter
 * does not own the pools it confirms, so it has no runtime for them.
 */
final class PoolChecks {
  static final long TTL_MS = 10_000;
  private static final int MAX_CACHED = 1_024;

  private record Cached(ResolvedPolicy policy, long until) {}

  private final KubernetesClient client;
  private final TenantFloors floors;
  private final WorkerExecutor workers;
  private final LongSupplier clock;
  private final Map<PoolKey, Cached> cache =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<PoolKey, Cached> eldest) {
          return size() > MAX_CACHED;
        }
      };

  PoolChecks(
      KubernetesClient client, TenantFloors floors, WorkerExecutor workers, LongSupplier clock) {
    this.client = client;
    this.floors = floors;
    this.workers = workers;
    this.clock = clock;
  }

  /** The pool's resolved policy; fails naming what is missing or invalid. */
  Future<ResolvedPolicy> resolve(PoolKey pool) {
    long now = clock.getAsLong();
    synchronized (cache) {
      Cached hit = cache.get(pool);
      if (hit != null && hit.until() > now) {
        return Future.succeededFuture(hit.policy());
      }
    }
    return workers.executeBlocking(
        () -> {
          ResolvedPolicy resolved = PolicyResolver.resolve(policy(pool), floors, tlsObjects);
          synchronized (cache) {
            cache.put(pool, new Cached(resolved, now + TTL_MS));
          }
          return resolved;
        },
        false);
  }

  private HealthPolicy policy(PoolKey key) {
    BackendPool pool = byName(BackendPool.class, key.namespace(), key.name());
    if (pool == null || pool.getSpec() == null || pool.getSpec().getPolicyRef() == null) {
      throw new IllegalStateException("no BackendPool " + key + " with a policyRef");
    }
    String name = pool.getSpec().getPolicyRef().getName();
    HealthPolicy policy = byName(HealthPolicy.class, key.namespace(), name);
    if (policy == null) {
      throw new IllegalStateException("no HealthPolicy " + key.namespace() + "/" + name);
    }
    return policy;
  }

  /** One object by name through a list by field: the chart grants list and watch, not get. */
  private <T extends HasMetadata> T byName(Class<T> type, String namespace, String name) {
    var items =
        client
            .resources(type)
            .inNamespace(namespace)
            .withField("metadata.name", name)
            .list()
            .getItems();
    return items.isEmpty() ? null : items.get(0);
  }

  /** Probe TLS's ConfigMaps and Secrets, read by name and the label (the owner's rule). */
  private final ProbeTlsObjects tlsObjects =
      new ProbeTlsObjects() {
        @Override
        public Map<String, String> configMap(String namespace, String name) {
          ConfigMap c = labelled(ConfigMap.class, namespace, name);
          return c == null ? null : c.getData() == null ? Map.of() : c.getData();
        }

        @Override
        public Map<String, String> secret(String namespace, String name) {
          Secret s = secretsReadable() ? labelled(Secret.class, namespace, name) : null;
          return s == null ? null : ProbeTlsSources.decoded(s);
        }

        @Override
        public boolean secretsReadable() {
          return floors.probeTlsSecrets();
        }
      };

  private <T extends HasMetadata> T labelled(Class<T> type, String namespace, String name) {
    var items =
        client
            .resources(type)
            .inNamespace(namespace)
            .withLabel(ProbeTlsObjects.LABEL, "true")
            .withField("metadata.name", name)
            .list()
            .getItems();
    return items.isEmpty() ? null : items.get(0);
  }
}
