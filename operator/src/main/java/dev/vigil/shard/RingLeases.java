package dev.vigil.shard;

import dev.vigil.publish.WriteBudget;
import dev.vigil.shard.ShardPlanner.PoolPlacement;
import dev.vigil.shard.ShardPlanner.ShardState;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sharder's writes to other shards' Leases (docs/design.md §7): taking an expired one over
 * (fencing) and deleting one long gone. Each write takes a {@link WriteBudget.Priority#LEASE}
 * token, which never waits. Runs on the sharder's round thread.
 */
final class RingLeases {
  private static final Logger LOG = LoggerFactory.getLogger(RingLeases.class);

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final ShardConfig config;

  RingLeases(KubernetesClient client, WriteBudget budget, ShardConfig config) {
    this.client = client;
    this.budget = budget;
    this.config = config;
  }

  /**
   * Takes over an expired shard Lease (as cached), so its replica can no longer renew it: an update
   * on the cached resourceVersion (a concurrent renewal makes it fail).
   */
  void fence(Lease lease, long now) {
    Lease copy = client.getKubernetesSerialization().clone(lease);
    copy.getSpec().setHolderIdentity("fenced-by-" + config.identity());
    copy.getSpec().setRenewTime(ShardLease.time(now));
    budget.leaseWrite();
    client.leases().inNamespace(config.namespace()).resource(copy).update();
  }

  /** A gone shard's Lease is deleted this long after its last renewal, once no pool names it. */
  static final int FORGET_AFTER_DURATIONS = 10;

  /**
   * Deletes the Leases of shards gone for {@link #FORGET_AFTER_DURATIONS} Lease durations that no
   * pool names any more: a Deployment's Pods get new names, so every rollout would otherwise leave
   * its replicas' Leases behind. A replica restarted under the same name creates its Lease again.
   */
  void forgetGone(
      Collection<Lease> ring,
      Map<String, ShardState> shards,
      Collection<PoolPlacement> pools,
      long now) {
    Set<String> named = new HashSet<>();
    for (PoolPlacement p : pools) {
      named.add(p.shard());
    }
    for (Lease lease : ring) {
      if (!lease.getMetadata().getName().startsWith(ShardConfig.LEASE_PREFIX)) {
        continue;
      }
      String shard = lease.getMetadata().getName().substring(ShardConfig.LEASE_PREFIX.length());
      var renewed = lease.getSpec() == null ? null : lease.getSpec().getRenewTime();
      if (shards.get(shard) != ShardState.GONE
          || named.contains(shard)
          || (renewed != null
              && now - ShardLease.millis(renewed)
                  < FORGET_AFTER_DURATIONS * Math.max(1_000, ShardLease.durationMs(lease)))) {
        continue;
      }
      try {
        budget.leaseWrite();
        client
            .leases()
            .inNamespace(config.namespace())
            .resource(lease)
            .lockResourceVersion()
            .delete();
        LOG.info("shard {} gone since {}: its Lease is deleted", shard, renewed);
      } catch (KubernetesClientException e) {
        LOG.info(
            "shard Lease {} not deleted ({} {})",
            lease.getMetadata().getName(),
            e.getCode(),
            e.getMessage());
      }
    }
  }
}
