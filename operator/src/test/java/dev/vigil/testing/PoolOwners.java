package dev.vigil.testing;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.shard.ShardConfig;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** Who owns which pool, as a sharded run's tests and benchmarks read it from the API server. */
public final class PoolOwners {
  private PoolOwners() {}

  /** Pools per owner, from status.shard (written by the owner once it runs the pool); "none". */
  public static Map<String, Long> owners(List<BackendPool> pools) {
    return pools.stream()
        .collect(
            Collectors.groupingBy(
                p ->
                    p.getStatus() == null || p.getStatus().getShard() == null
                        ? "none"
                        : p.getStatus().getShard(),
                TreeMap::new,
                Collectors.counting()));
  }

  /** Pool name -> its {@code vigil.dev/shard} label (null when unlabelled). */
  public static Map<String, String> labels(List<BackendPool> pools) {
    Map<String, String> owners = new HashMap<>();
    for (BackendPool p : pools) {
      owners.put(p.getMetadata().getName(), shardOf(p));
    }
    return owners;
  }

  /** The pool's {@code vigil.dev/shard} label, or null. */
  public static String shardOf(BackendPool p) {
    Map<String, String> labels = p.getMetadata().getLabels();
    return labels == null ? null : labels.get(ShardConfig.SHARD_LABEL);
  }

  /** Every pool labelled for one of {@code live} and handed to it in status. */
  public static boolean settled(List<BackendPool> pools, Collection<String> live) {
    for (BackendPool p : pools) {
      String shard = shardOf(p);
      if (shard == null
          || !live.contains(shard)
          || p.getStatus() == null
          || !shard.equals(p.getStatus().getShard())) {
        return false;
      }
    }
    return true;
  }
}
