package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.shard.ShardPlanner.Action;
import dev.vigil.shard.ShardPlanner.Assign;
import dev.vigil.shard.ShardPlanner.Drain;
import dev.vigil.shard.ShardPlanner.Fence;
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
 * Property: after any sequence of joins, graceful leaves, crashes, partitions and pool changes, no
 * pool is ever run by two replicas at once (self-fencing beats the sharder's takeover), and once
 * things settle every pool has exactly one live owner, in its rendezvous place. The model runs the
 * real {@link ShardPlanner} and {@link ShardState} rule; Leases, labels and replicas are simulated
 * with one-second steps of a manual clock.
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

    /** What a partitioned replica still believes it owns. */
    Set<String> frozen = Set.of();

    Replica(String name) {
      this.name = name;
    }
  }

  private final Map<String, Lease> leases = new HashMap<>();
  private final Map<String, Replica> replicas = new LinkedHashMap<>();
  private final Map<String, Pool> pools = new LinkedHashMap<>();
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
        switch (random.nextInt(6)) {
          case 0 -> join("r" + nextReplica++);
          case 1 -> {
            if (up.size() > 1) {
              leave(up.get(random.nextInt(up.size())));
            }
          }
          case 2 -> {
            if (up.size() > 1) {
              up.get(random.nextInt(up.size())).crashed = true;
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
          default -> {
            if (random.nextBoolean()) {
              addPool(random);
            } else if (!pools.isEmpty()) {
              pools.remove(new ArrayList<>(pools.keySet()).get(random.nextInt(pools.size())));
            }
          }
        }
      }
      tick(planner);
    }
    replicas.values().forEach(r -> r.partitioned = false);
    if (replicas.values().stream().allMatch(r -> r.crashed)) {
      join("r" + nextReplica);
    }
    for (int step = 0; step < 1_200; step++) {
      tick(planner);
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
      assertThat(runners(p.id())).as(p.id()).hasSize(1);
      assertThat(p.drainTo()).isNull();
      assertThat(p.shard()).isEqualTo(places.get(p.id()));
    }
  }

  private void tick(ShardPlanner planner) {
    now += 1_000;
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
      } else {
        r.fenced = true;
      }
    }
    for (Replica r : replicas.values()) {
      if (now - r.lastRenewOk >= RENEW_DEADLINE) {
        r.fenced = true; // self-fencing: missed its own renew deadline
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
        relabel(as.pool(), as.shard(), null);
      } else if (a instanceof Drain d) {
        relabel(d.pool(), pools.get(d.pool()).shard(), d.to());
      }
    }
    // owners acknowledge drains: they stop running the pool and relabel it to the target
    for (Pool p : new ArrayList<>(pools.values())) {
      Replica owner = p.shard() == null ? null : replicas.get(p.shard());
      if (p.drainTo() != null && owner != null && active(owner)) {
        relabel(p.id(), p.drainTo(), null);
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

  /** What the replica runs: the pools labelled for it, or what it last saw when partitioned. */
  private Set<String> owned(Replica r) {
    if (r.partitioned) {
      return r.frozen;
    }
    Set<String> owned = new HashSet<>();
    for (Pool p : pools.values()) {
      if (r.name.equals(p.shard()) && p.drainTo() == null) {
        owned.add(p.id());
      }
    }
    return owned;
  }

  private boolean active(Replica r) {
    return !r.crashed && !r.partitioned && !r.fenced;
  }

  private void relabel(String id, String shard, String drainTo) {
    Pool p = pools.get(id);
    pools.put(id, new Pool(id, p.uid(), shard, drainTo));
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
    pools.put(
        id, new Pool(id, new UUID(random.nextLong(), random.nextLong()).toString(), null, null));
  }
}
