package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.shard.ShardPlanner.Action;
import dev.vigil.shard.ShardPlanner.Assign;
import dev.vigil.shard.ShardPlanner.Fence;
import dev.vigil.shard.ShardPlanner.Move;
import dev.vigil.shard.ShardPlanner.Pool;
import dev.vigil.shard.ShardPlanner.ShardState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Property: after any sequence of joins, graceful leaves, crashes, restarts under the same name,
 * partitions and pool changes, no pool is ever run by two replicas at once (self-fencing beats the
 * sharder's takeover; a new owner waits for the handover in status), and once things settle every
 * pool has exactly one live owner, in its rendezvous place, named in its status. The model runs the
 * real {@link ShardPlanner} and {@link ShardState} rule; Leases, labels, {@code status.shard} and
 * replicas are simulated with one-second steps of a manual clock.
 */
class ShardingPropertyTest {
  private static final long DURATION = 15_000;
  private static final long RENEW_DEADLINE = 10_000;

  private static final class Lease {
    String holder;
    long renew;
  }

  private static final class Replica {
    final String name;
    boolean crashed;
    boolean partitioned;
    long lastRenewOk;
    boolean fenced;

    /** Pools its informer has seen labelled for it in this incarnation (it gets their deletes). */
    final Set<String> seen = new HashSet<>();

    /** Restarted: hands over leftovers once it holds its Lease again. */
    boolean sweep;

    /** Crashed, and its container restarts under the same name at this time; -1: stays down. */
    long restartAt = -1;

    /** What a partitioned replica still believes it owns. */
    Set<String> frozen = Set.of();

    Replica(String name) {
      this.name = name;
    }
  }

  private final Map<String, Lease> leases = new HashMap<>();
  private final Map<String, Replica> replicas = new LinkedHashMap<>();
  private final Map<String, Pool> pools = new LinkedHashMap<>();

  /** Pools whose old owner has yet to hand them over: since when. */
  private final Map<String, Long> handingOver = new HashMap<>();

  /** An owner waiting for a pool's handover since a time. */
  private record Wait(String owner, long since) {}

  /** Pools whose new owner waits for their handover. */
  private final Map<String, Wait> waiting = new HashMap<>();

  /** Each pool's {@code status.shard}: the shard that runs it or was handed it. */
  private final Map<String, String> inStatus = new HashMap<>();

  private long now;

  @Test
  void everyPoolHasExactlyOneOwnerAfterAnySequence() {
    for (long seed = 1; seed <= 60; seed++) {
      run(new SplittableRandom(seed));
    }
  }

  private void run(SplittableRandom random) {
    leases.clear();
    replicas.clear();
    pools.clear();
    inStatus.clear();
    handingOver.clear();
    waiting.clear();
    now = 0;
    ShardPlanner planner = new ShardPlanner(random.nextBoolean() ? 0.1 : 0);
    int nextReplica = 0;
    for (int i = 0; i < 1 + random.nextInt(3); i++) {
      join("r" + nextReplica++);
    }
    for (int i = 0; i < 40; i++) {
      addPool(random);
    }
    for (int step = 0; step < 400; step++) {
      if (random.nextInt(10) == 0) {
        List<Replica> up = replicas.values().stream().filter(r -> !r.crashed).toList();
        switch (random.nextInt(7)) {
          case 0 -> join("r" + nextReplica++);
          case 1 -> {
            if (up.size() > 1) {
              leave(up.get(random.nextInt(up.size())));
            }
          }
          case 2 -> {
            if (up.size() > 1) {
              Replica r = up.get(random.nextInt(up.size()));
              r.crashed = true;
              if (random
                  .nextBoolean()) { // its container restarts in 1-10 s, before its Lease expires
                r.restartAt = now + 1_000 * (1 + random.nextInt(10));
              }
            }
          }
          case 3 -> {
            if (up.size() > 1) {
              Replica r = up.get(random.nextInt(up.size()));
              if (!r.partitioned) {
                r.partitioned = true;
                r.frozen = new HashSet<>(owned(r));
              }
            }
          }
          case 4 -> replicas.values().forEach(r -> r.partitioned = false);
          case 5 -> {
            List<Replica> down = replicas.values().stream().filter(r -> r.crashed).toList();
            if (!down.isEmpty()) {
              restart(down.get(random.nextInt(down.size())));
            }
          }
          default -> {
            if (random.nextBoolean()) {
              addPool(random);
            } else if (!pools.isEmpty()) {
              String gone = new ArrayList<>(pools.keySet()).get(random.nextInt(pools.size()));
              pools.remove(gone);
              inStatus.remove(gone);
            }
          }
        }
      }
      tick(planner, random);
    }
    replicas.values().forEach(r -> r.partitioned = false);
    if (replicas.values().stream().allMatch(r -> r.crashed)) {
      join("r" + nextReplica);
    }
    for (int step = 0; step < 1_200; step++) {
      tick(planner, random);
    }
    List<String> live =
        replicas.values().stream()
            .filter(r -> !r.crashed && r.name.equals(leases.get(r.name).holder))
            .map(r -> r.name)
            .sorted()
            .toList();
    Map<String, String> uids = new HashMap<>();
    pools.values().forEach(p -> uids.put(p.id(), p.uid()));
    Map<String, String> places = Rendezvous.assign(uids, live);
    for (Pool p : pools.values()) {
      assertThat(runners(p.id()))
          .as(
              "%s labelled %s, status %s, replicas %s",
              p.id(), p.shard(), inStatus.get(p.id()), describe())
          .hasSize(1);
      assertThat(p.shard()).isEqualTo(places.get(p.id()));
      assertThat(inStatus.get(p.id())).as("status.shard of " + p.id()).isEqualTo(p.shard());
    }
  }

  private void tick(ShardPlanner planner, SplittableRandom random) {
    now += 1_000;
    for (Replica r : replicas.values()) {
      if (r.crashed && r.restartAt >= 0 && now >= r.restartAt) {
        r.restartAt = -1;
        restart(r);
      }
    }
    for (Replica r : replicas.values()) {
      if (r.crashed || r.partitioned) {
        continue;
      }
      Lease lease = leases.get(r.name);
      if (r.name.equals(lease.holder) || lease.holder == null || now - lease.renew >= DURATION) {
        lease.holder = r.name;
        lease.renew = now;
        r.lastRenewOk = now;
        r.fenced = false;
        if (r.sweep) {
          r.sweep = false;
          for (Pool p : pools.values()) {
            if (r.name.equals(inStatus.get(p.id())) && !r.name.equals(p.shard())) {
              inStatus.put(p.id(), p.shard());
            }
          }
        }
      } else {
        fence(r); // its Lease was taken over
      }
    }
    for (Replica r : replicas.values()) {
      if (now - r.lastRenewOk >= RENEW_DEADLINE) {
        fence(r); // self-fencing: missed its own renew deadline
      }
    }
    for (Pool p : pools.values()) {
      assertThat(runners(p.id())).as("%s at %d", p.id(), now).hasSizeLessThanOrEqualTo(1);
    }
    Map<String, ShardState> states = new HashMap<>();
    leases.forEach(
        (name, l) -> states.put(name, ShardState.of(name, l.holder, l.renew, DURATION, now)));
    for (Action a : planner.plan(new ArrayList<>(pools.values()), states, now)) {
      if (a instanceof Fence f) {
        leases.get(f.shard()).holder = "sharder";
        leases.get(f.shard()).renew = now;
      } else if (a instanceof Assign as) {
        relabel(as.pool(), as.shard());
      } else if (a instanceof Move m) {
        relabel(m.pool(), m.to());
      }
    }
    // old owners hand over what was relabelled away (the pool left their informer), each in this
    // tick or a later one (a watch event and a status write take their time)
    for (Pool p : pools.values()) {
      Replica owner = replicas.get(inStatus.get(p.id()));
      if (owner != null
          && active(owner)
          && !owner.name.equals(p.shard())
          && owner.seen.contains(p.id())) {
        long since = handingOver.computeIfAbsent(p.id(), k -> now);
        if (random.nextBoolean() || now - since >= 3_000) {
          inStatus.put(p.id(), p.shard());
          owner.seen.remove(p.id());
          handingOver.remove(p.id());
        }
      } else {
        handingOver.remove(p.id());
      }
    }
    for (Pool p : pools.values()) {
      Replica labelled = p.shard() == null ? null : replicas.get(p.shard());
      if (labelled != null && !labelled.crashed && !labelled.partitioned) {
        labelled.seen.add(p.id());
      }
    }
    // new owners start what is labelled for them once status names them or its shard is gone
    states.clear();
    leases.forEach(
        (name, l) -> states.put(name, ShardState.of(name, l.holder, l.renew, DURATION, now)));
    for (Pool p : pools.values()) {
      Replica owner = p.shard() == null ? null : replicas.get(p.shard());
      String named = inStatus.get(p.id());
      if (owner == null || !active(owner)) {
        continue;
      }
      boolean handedOver = named == null || named.equals(owner.name);
      boolean formerGone = states.getOrDefault(named, ShardState.GONE) == ShardState.GONE;
      // a wait starts when the pool reaches this owner's informer and ends when it leaves
      Wait wait = waiting.get(p.id());
      if (wait == null || !wait.owner().equals(owner.name)) {
        wait = new Wait(owner.name, now);
        waiting.put(p.id(), wait);
      }
      if (handedOver || formerGone || now - wait.since() >= DURATION) {
        waiting.remove(p.id());
        if (!handedOver) {
          // starting without the handover skips the old owner's last changes: only allowed once
          // that owner can no longer have any (stopped, fenced, cut off and self-fenced, or it
          // never had the pool in this incarnation)
          Replica former = replicas.get(named);
          assertThat(former == null || !active(former) || !former.seen.contains(p.id()))
              .as(
                  "%s starts %s at %d while %s may still hand it over",
                  owner.name, p.id(), now, named)
              .isTrue();
        }
        inStatus.put(p.id(), owner.name);
      }
    }
  }

  private Set<String> runners(String pool) {
    Set<String> runners = new HashSet<>();
    for (Replica r : replicas.values()) {
      if (!r.fenced && !r.crashed && owned(r).contains(pool)) {
        runners.add(r.name);
      }
    }
    return runners;
  }

  /**
   * What the replica runs: the pools labelled for it whose status names it, or what it last saw
   * when partitioned.
   */
  private Set<String> owned(Replica r) {
    if (r.partitioned) {
      return r.frozen;
    }
    Set<String> owned = new HashSet<>();
    for (Pool p : pools.values()) {
      if (r.name.equals(p.shard()) && r.name.equals(inStatus.get(p.id()))) {
        owned.add(p.id());
      }
    }
    return owned;
  }

  private String describe() {
    StringBuilder b = new StringBuilder();
    replicas
        .values()
        .forEach(
            r ->
                b.append(
                    String.format(
                        "%s[crashed=%s part=%s fenced=%s lease=%s/%d seen=%d] ",
                        r.name,
                        r.crashed,
                        r.partitioned,
                        r.fenced,
                        leases.get(r.name).holder,
                        leases.get(r.name).renew,
                        r.seen.size())));
    return b.append("now=").append(now).toString();
  }

  private boolean active(Replica r) {
    return !r.crashed && !r.partitioned && !r.fenced;
  }

  private void relabel(String id, String shard) {
    Pool p = pools.get(id);
    pools.put(id, new Pool(id, p.uid(), shard));
  }

  /**
   * A crashed replica comes back under its name (a container restart in the same Pod): it takes its
   * Lease again once that is free, held by itself or expired, and then sweeps once: every pool
   * whose status names it but whose label does not is handed over.
   */
  /**
   * A replica that lost its Lease stops running pools and exits; the kubelet restarts it under its
   * name: it forgets what its informer saw and sweeps once it holds its Lease again.
   */
  private static void fence(Replica r) {
    if (!r.fenced) {
      r.fenced = true;
      r.seen.clear();
      r.sweep = true;
    }
  }

  private void restart(Replica r) {
    r.crashed = false;
    r.partitioned = false;
    r.seen.clear();
    r.lastRenewOk = now;
    r.fenced = true; // until its first renewal
    r.sweep = true;
  }

  private void join(String name) {
    Replica r = new Replica(name);
    r.lastRenewOk = now;
    replicas.put(name, r);
    Lease lease = new Lease();
    lease.holder = name;
    lease.renew = now;
    leases.put(name, lease);
  }

  private void leave(Replica r) {
    r.crashed = true;
    leases.get(r.name).holder = null; // a graceful stop releases the Lease
  }

  private void addPool(SplittableRandom random) {
    String id = "ns/pool-" + random.nextInt(1_000_000);
    pools.put(id, new Pool(id, new UUID(random.nextLong(), random.nextLong()).toString(), null));
  }
}
