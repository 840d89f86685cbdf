package dev.vigil.shard;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Who confirms a pool owner's Down verdicts (docs/design.md §8): per zone other than the owner's,
 * the replica of that zone that weighs most for the pool by the sharder's own rendezvous weight
 * ({@link Rendezvous}), so every replica names the same voters for a pool and a pool's voters move
 * only when its zone's replicas change. A Suspect replica never votes; a replica whose zone is
 * unknown neither votes nor counts as another zone (it may share the owner's failure domain). Pure.
 */
public final class Voters {
  private Voters() {}

  /**
   * A live replica as its shard Lease shows it; {@code zone} "" when unknown, {@code address} (its
   * {@code host:port} for questions) "" when it takes none.
   */
  public record Checker(String name, String zone, boolean suspect, String address) {
    public Checker {
      address = address == null ? "" : address;
    }

    public Checker(String name, String zone, boolean suspect) {
      this(name, zone, suspect, "");
    }
  }

  /**
   * The voters to ask for a pool, heaviest first: at most {@code confirmers}, at most one per zone,
   * none in the owner's zone; empty when there is no such replica (the owner decides alone).
   *
   * @param poolUid the pool's UID (what the sharder hashes)
   * @param owner the owner (its zone is excluded, whatever its own Suspect flag)
   * @param live the replicas whose shard Leases are live, the owner among them or not
   */
  public static List<Checker> confirmers(
      String poolUid, Checker owner, List<Checker> live, int confirmers) {
    long pool = Rendezvous.hash(poolUid);
    Map<String, Checker> heaviestPerZone = new HashMap<>();
    Map<String, Long> weights = new HashMap<>();
    for (Checker c : live) {
      if (c.suspect() || c.zone().isEmpty() || c.zone().equals(owner.zone())) {
        continue;
      }
      long w = Rendezvous.weight(pool, Rendezvous.hash(c.name()));
      weights.put(c.name(), w);
      Checker best = heaviestPerZone.get(c.zone());
      if (best == null || heavier(w, c, weights.get(best.name()), best)) {
        heaviestPerZone.put(c.zone(), c);
      }
    }
    List<Checker> voters = new ArrayList<>(heaviestPerZone.values());
    voters.sort(
        (a, b) -> {
          int byWeight = Long.compareUnsigned(weights.get(b.name()), weights.get(a.name()));
          return byWeight != 0 ? byWeight : a.name().compareTo(b.name());
        });
    return voters.size() <= confirmers ? voters : List.copyOf(voters.subList(0, confirmers));
  }

  /** Weights compared unsigned, as the sharder does; a tie goes to the first name in order. */
  private static boolean heavier(long w, Checker c, long bestWeight, Checker best) {
    int byWeight = Long.compareUnsigned(w, bestWeight);
    return byWeight > 0 || (byWeight == 0 && c.name().compareTo(best.name()) < 0);
  }
}
