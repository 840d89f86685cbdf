package dev.vigil.shard;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The sharder's decisions (docs/design.md §7), pure: no Kubernetes types, time passed in. Given
 * every pool's labels and every shard's Lease state, it answers what to write next:
 *
 * <ul>
 *   <li>a pool without an owner, or owned by a shard whose Lease another holder took over or that
 *       released it (fenced or stopped), is {@link Assign assigned} at once, never rate-limited;
 *   <li>a pool owned by a shard whose Lease expired but is still held in its name is left alone
 *       until that Lease is {@link Fence fenced} (taken over), so a replica that is only slow can
 *       no longer write when its pools move; every expired Lease is fenced, also when no pool is
 *       labelled for its shard any more (the new owner of a pool that shard was handing over waits
 *       for it to hand over or to be gone);
 *   <li>a pool owned by a live shard that is not its place in {@link Rendezvous#assign} is {@link
 *       Move moved} there, at most {@code movesPerMinute} of the pools a minute (a token bucket
 *       holding one minute's moves): one relabel; the old owner hands the pool over in status and
 *       the new one starts from that status ({@link PoolHandoff}).
 * </ul>
 *
 * <p>Not thread-safe: the sharder calls it from one thread.
 */
public final class ShardPlanner {
  /** What a shard's Lease says, as seen by the sharder. */
  public enum ShardState {
    /** Held in the shard's own name and renewed within its duration. */
    LIVE,
    /** Held in the shard's own name but not renewed within its duration: fence it first. */
    EXPIRED,
    /** Held by someone else (fenced) or released: the shard writes nothing. */
    GONE;

    /**
     * A shard's state from its Lease.
     *
     * @param holder the Lease's holderIdentity, or null
     * @param renewMs the Lease's renewTime (the sharder's clock is compared with it: nodes keep
     *     time with NTP, and a Lease duration is seconds)
     */
    public static ShardState of(
        String shard, String holder, long renewMs, long durationMs, long nowMs) {
      if (!shard.equals(holder)) {
        return GONE;
      }
      return nowMs - renewMs < durationMs ? LIVE : EXPIRED;
    }
  }

  /**
   * A pool as the sharder sees it.
   *
   * @param id namespace/name
   * @param shard the {@code vigil.dev/shard} label, or null
   */
  public record PoolPlacement(String id, String uid, String shard) {}

  /** One write the sharder makes. */
  public sealed interface Action permits Assign, Move, Fence {}

  /** Label the pool {@code vigil.dev/shard=shard}: it had no live owner. */
  public record Assign(String pool, String shard) implements Action {}

  /** Label the pool {@code vigil.dev/shard=to}, away from its live owner: a planned move. */
  public record Move(String pool, String to) implements Action {}

  /** Take over the shard's expired Lease, so the shard can no longer renew it. */
  public record Fence(String shard) implements Action {}

  private final double movesPerMinuteFraction;
  private double tokens = Double.NaN;
  private long refilledAt;

  /**
   * @param movesPerMinuteFraction planned moves a minute as a fraction of all pools (at least one
   *     move a minute); 0 or less: no limit
   */
  public ShardPlanner(double movesPerMinuteFraction) {
    this.movesPerMinuteFraction = movesPerMinuteFraction;
  }

  /** The writes to make now; idempotent while nothing changed except for rate-limited moves. */
  public List<Action> plan(
      Collection<PoolPlacement> pools, Map<String, ShardState> shards, long nowMs) {
    List<String> live =
        shards.entrySet().stream()
            .filter(e -> e.getValue() == ShardState.LIVE)
            .map(Map.Entry::getKey)
            .sorted()
            .toList();
    List<Action> actions = new ArrayList<>();
    Map<String, String> places = places(pools, live);
    List<Move> movable = new ArrayList<>();
    for (PoolPlacement p : pools) {
      String place = places.get(p.id());
      String owner = p.shard();
      if (owner != null && shards.get(owner) == ShardState.EXPIRED) {
        continue; // fenced below first
      } else if (place == null) {
        continue; // no live shard: pools keep their labels, status shows nobody probes
      } else if (owner == null || !live.contains(owner)) {
        actions.add(new Assign(p.id(), place));
      } else if (!owner.equals(place)) {
        movable.add(new Move(p.id(), place));
      }
    }
    actions.addAll(0, fences(shards));
    int moves = takeTokens(movable.size(), pools.size(), nowMs);
    movable.sort(java.util.Comparator.comparing(Move::pool));
    actions.addAll(movable.subList(0, moves));
    return actions;
  }

  /** Where each pool belongs among the live shards, by its UID. */
  private static Map<String, String> places(Collection<PoolPlacement> pools, List<String> live) {
    Map<String, String> uids = new TreeMap<>();
    for (PoolPlacement p : pools) {
      uids.put(p.id(), p.uid());
    }
    return Rendezvous.assign(uids, live);
  }

  /** A fence for every expired shard, in name order: they come before any other write. */
  private static List<Action> fences(Map<String, ShardState> shards) {
    List<Action> fences = new ArrayList<>();
    new TreeMap<>(shards)
        .forEach(
            (shard, state) -> {
              if (state == ShardState.EXPIRED) {
                fences.add(new Fence(shard));
              }
            });
    return fences;
  }

  /** Planned moves allowed now, up to {@code wanted}, from the token bucket. */
  private int takeTokens(int wanted, int pools, long nowMs) {
    if (movesPerMinuteFraction <= 0) {
      return wanted;
    }
    double perMinute = Math.max(1, movesPerMinuteFraction * pools);
    if (Double.isNaN(tokens)) {
      tokens = perMinute;
    } else {
      tokens = Math.min(perMinute, tokens + perMinute * Math.max(0, nowMs - refilledAt) / 60_000d);
    }
    refilledAt = nowMs;
    int granted = (int) Math.min(wanted, Math.floor(tokens));
    tokens -= granted;
    return granted;
  }
}
