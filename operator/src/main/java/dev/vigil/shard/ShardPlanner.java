package dev.vigil.shard;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The sharder's decisions (DESIGN §7), pure: no Kubernetes types, time passed in. Given every
 * pool's labels and every shard's Lease state, it answers what to write next:
 *
 * <ul>
 *   <li>a pool without an owner, or owned by a shard whose Lease another holder took over or that
 *       released it (fenced or stopped), is {@link Assign assigned} at once, never rate-limited;
 *   <li>a pool owned by a shard whose Lease expired but is still held in its name is left alone
 *       until that Lease is {@link Fence fenced} (taken over), so a replica that is only slow can
 *       no longer write when its pools move;
 *   <li>a pool owned by a live shard that is not its place in {@link Rendezvous#assign} is {@link
 *       Drain drained} towards that place, at most {@code movesPerMinute} of the pools a minute (a
 *       token bucket holding one minute's moves); the owner acknowledges by relabelling the pool to
 *       the drain's target.
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
   * @param drainTo the {@code vigil.dev/drain} label (the target shard), or null
   */
  public record Pool(String id, String uid, String shard, String drainTo) {}

  /** One write the sharder makes. */
  public sealed interface Action permits Assign, Drain, Fence {}

  /** Label the pool {@code vigil.dev/shard=shard}, removing any {@code vigil.dev/drain}. */
  public record Assign(String pool, String shard) implements Action {}

  /** Label the pool {@code vigil.dev/drain=to}: its owner hands it over. */
  public record Drain(String pool, String to) implements Action {}

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
  public List<Action> plan(Collection<Pool> pools, Map<String, ShardState> shards, long nowMs) {
    List<String> live =
        shards.entrySet().stream()
            .filter(e -> e.getValue() == ShardState.LIVE)
            .map(Map.Entry::getKey)
            .sorted()
            .toList();
    Set<String> fences = new LinkedHashSet<>();
    List<Action> actions = new ArrayList<>();
    Map<String, String> uids = new TreeMap<>();
    for (Pool p : pools) {
      uids.put(p.id(), p.uid());
    }
    Map<String, String> places = Rendezvous.assign(uids, live);
    List<Drain> movable = new ArrayList<>();
    for (Pool p : pools) {
      String place = places.get(p.id());
      String owner = p.shard();
      if (owner != null && shards.get(owner) == ShardState.EXPIRED) {
        fences.add(owner);
      } else if (place == null) {
        continue; // no live shard: pools keep their labels, status shows nobody probes
      } else if (owner == null || !live.contains(owner)) {
        actions.add(new Assign(p.id(), place));
      } else if (p.drainTo() != null) {
        if (owner.equals(place)) {
          actions.add(new Assign(p.id(), owner)); // it belongs where it is again: cancel the drain
        } else if (!p.drainTo().equals(place)) {
          actions.add(new Drain(p.id(), place)); // the target changed: retarget (no new move)
        }
        // else: waiting for the owner's acknowledgement
      } else if (!owner.equals(place)) {
        movable.add(new Drain(p.id(), place));
      }
    }
    for (String shard : fences) {
      actions.add(0, new Fence(shard));
    }
    int moves = takeTokens(movable.size(), pools.size(), nowMs);
    movable.sort(java.util.Comparator.comparing(Drain::pool));
    actions.addAll(movable.subList(0, moves));
    return actions;
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
