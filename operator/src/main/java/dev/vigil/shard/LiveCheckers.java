package dev.vigil.shard;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * The ring's live checkers as their shard Leases show them (docs/design.md §8): every replica whose
 * Lease is live, with the zone it carries and whether it is Suspect by {@link SelfDoubt}, its
 * failing share against the other live replicas' (each Lease's own annotation, so every replica
 * that reads the same Leases names the same Suspects). A Lease without the annotations counts as
 * zone "" and share 0 ({@link CheckerReport#UNKNOWN}). Pure.
 */
final class LiveCheckers {
  private LiveCheckers() {}

  private record Live(String name, CheckerReport report) {}

  /** The live checkers among the ring's {@code leases} at {@code now}, by name. */
  static List<Voters.Checker> of(Collection<Lease> leases, long now) {
    List<Live> live = new ArrayList<>();
    var states = ShardLease.states(leases, now);
    for (Lease lease : leases) {
      String name = lease.getMetadata().getName();
      if (!name.startsWith(ShardConfig.LEASE_PREFIX)) {
        continue;
      }
      String shard = name.substring(ShardConfig.LEASE_PREFIX.length());
      if (states.get(shard) == ShardPlanner.ShardState.LIVE) {
        live.add(new Live(shard, CheckerReport.of(lease.getMetadata())));
      }
    }
    live.sort(Comparator.comparing(Live::name));
    List<Voters.Checker> checkers = new ArrayList<>(live.size());
    for (Live c : live) {
      List<Double> peers = new ArrayList<>(live.size() - 1);
      for (Live other : live) {
        if (other != c) {
          peers.add(other.report().failingShare());
        }
      }
      boolean suspect = SelfDoubt.suspect(c.report().failingShare(), peers);
      checkers.add(new Voters.Checker(c.name(), c.report().zone(), suspect, c.report().address()));
    }
    return List.copyOf(checkers);
  }
}
