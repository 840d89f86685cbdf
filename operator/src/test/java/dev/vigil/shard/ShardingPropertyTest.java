package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.runtime.PoolKey;
import dev.vigil.shard.ShardPlanner.Action;
import dev.vigil.shard.ShardPlanner.Assign;
import dev.vigil.shard.ShardPlanner.Fence;
import dev.vigil.shard.ShardPlanner.Move;
import dev.vigil.shard.ShardPlanner.PoolPlacement;
import dev.vigil.shard.ShardPlanner.ShardState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Property: after any sequence of joins, graceful leaves, crashes, restarts under the same name,
 * partitions and pool changes, no pool is ever run by two replicas at once (self-fencing beats the
 * sharder's takeover; a new owner waits for the handover in status), and once things settle every
 * pool has exactly one live owner, in its rendezvous place, named in its status. The model runs the
 * real {@link ShardPlanner} and {@link ShardState} rule (the sharder's assignments, moves and
 * fencing), each replica's real {@link PoolHandoff} (whether it may run, and how long a new owner
 * waits for a handover: {@link PoolHandoff#awaitedOwner}), and the timings of the default {@link
 * ShardConfig}: Leases renewed every {@link ShardConfig#renewPeriod()}, writes stopped past {@link
 * ShardConfig#renewDeadlineMs()} (as {@code ShardLease.writable}), expiry after {@link
 * ShardConfig#leaseDurationMs()}. Leases, labels, {@code status.shard} and the API server are
 * simulated with one-second steps of a manual clock. Floors over all seeds prove the hard cases
 * happened: partitions, self-fencing, the sharder's fencing, handovers and waits given up.
 *
 * <p>Past 400 lines: the simulated world (Leases, labels, status, replicas) and the property it is
 * checked against are one model; split, each half would need the other's state.
 */
class ShardingPropertyTest {
  /** The defaults of the flags ({@code --shard-lease-duration}, {@code --shard-move-rate}). */
  private static final ShardConfig CONFIG =
      ShardConfig.parse(
          flag -> flag.equals("sharding") ? "true" : null,
          env -> env.equals("POD_NAME") ? "r0" : null,
          "vigil-system");

  private static final long DURATION = CONFIG.leaseDurationMs();
  private static final long RENEW_DEADLINE = CONFIG.renewDeadlineMs();
  private static final long RENEW_PERIOD = CONFIG.renewPeriod().toMillis();

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

    /** Pools labelled for it that its handoff still waits for. */
    final Set<String> waitingFor = new HashSet<>();

    /** When it last tried to renew its Lease (it tries every renew period). */
    long lastRenewTry = Long.MIN_VALUE / 2;

    /** This incarnation's handoff rules; a new one on every restart (a new process). */
    PoolHandoff handoff;

    Replica(String name) {
      this.name = name;
    }
  }

  private final Map<String, BackendPool> resources = new HashMap<>();

  /** What the seeds made happen, for the floors. */
  private final Map<String, Integer> happened = new java.util.TreeMap<>();

  private void count(String what) {
    happened.merge(what, 1, Integer::sum);
  }

  private final Map<String, Lease> leases = new HashMap<>();
  private final Map<String, Replica> replicas = new LinkedHashMap<>();
  private final Map<String, PoolPlacement> pools = new LinkedHashMap<>();

  /** Pools whose old owner has yet to hand them over: since when. */
  private final Map<String, Long> handingOver = new HashMap<>();

  /** Each pool's {@code status.shard}: the shard that runs it or was handed it. */
  private final Map<String, String> inStatus = new HashMap<>();

  private long now;

  @Test
  void everyPoolHasExactlyOneOwnerAfterAnySequence() {
    for (long seed = 1; seed <= 60; seed++) {
      run(new SplittableRandom(seed));
    }
    // Floors: each hard case happened often across the seeds (counts are deterministic; the floors
    // sit near half of what these seeds give, so a change to the model that stops exercising a case
    // fails here instead of passing vacuously).
    assertThat(happened)
        .as("what the seeds made happen")
        .hasEntrySatisfying(
            "partition", n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_PARTITIONS))
        .hasEntrySatisfying(
            "self-fenced: renew deadline passed",
            n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_SELF_FENCED))
        .hasEntrySatisfying(
            "sharder fenced a held Lease",
            n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_SHARDER_FENCED))
        .hasEntrySatisfying(
            "handed over in status", n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_HANDOVERS))
        .hasEntrySatisfying(
            "started after the former shard was gone",
            n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_FORMER_GONE))
        .hasEntrySatisfying(
            "waited a Lease duration, then started",
            n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_GAVE_UP))
        .hasEntrySatisfying("move", n -> assertThat(n).isGreaterThanOrEqualTo(FLOOR_MOVES));
  }

  // Seeds 1-60 give: 248 partitions, 209 self-fencings, 286 Leases fenced by the sharder, 6,158
  // handovers, 7,516 starts after the former shard was gone, 47 waits given up, 6,859 moves.
  private static final int FLOOR_PARTITIONS = 120;
  private static final int FLOOR_SELF_FENCED = 100;
  private static final int FLOOR_SHARDER_FENCED = 140;
  private static final int FLOOR_HANDOVERS = 3_000;
  private static final int FLOOR_FORMER_GONE = 3_500;
  private static final int FLOOR_GAVE_UP = 20;
  private static final int FLOOR_MOVES = 3_000;

  private void run(SplittableRandom random) {
    leases.clear();
    replicas.clear();
    pools.clear();
    inStatus.clear();
    handingOver.clear();
    now = 0;
    ShardPlanner planner =
        new ShardPlanner(random.nextBoolean() ? CONFIG.movesPerMinuteFraction() : 0);
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
                count("partition");
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
    for (PoolPlacement p : pools.values()) {
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
      if (r.crashed || r.partitioned || now - r.lastRenewTry < RENEW_PERIOD) {
        continue;
      }
      r.lastRenewTry = now;
      Lease lease = leases.get(r.name);
      if (r.name.equals(lease.holder) || lease.holder == null || now - lease.renew >= DURATION) {
        lease.holder = r.name;
        lease.renew = now;
        r.lastRenewOk = now;
        r.fenced = false;
        if (r.sweep) {
          r.sweep = false;
          for (PoolPlacement p : pools.values()) {
            if (r.name.equals(inStatus.get(p.id())) && !r.name.equals(p.shard())) {
              inStatus.put(p.id(), p.shard());
            }
          }
        }
      } else if (fence(r)) { // its Lease was taken over
        count("fenced: Lease taken over");
      }
    }
    for (Replica r : replicas.values()) {
      // ShardLease.writable: renewed within the renew deadline, else it stops writing
      if (!r.crashed && now - r.lastRenewOk >= RENEW_DEADLINE && fence(r)) {
        count("self-fenced: renew deadline passed");
      }
    }
    for (PoolPlacement p : pools.values()) {
      assertThat(runners(p.id())).as("%s at %d", p.id(), now).hasSizeLessThanOrEqualTo(1);
    }
    Map<String, ShardState> states = new HashMap<>();
    leases.forEach(
        (name, l) -> states.put(name, ShardState.of(name, l.holder, l.renew, DURATION, now)));
    for (Action a : planner.plan(new ArrayList<>(pools.values()), states, now)) {
      if (a instanceof Fence f) {
        if (f.shard().equals(leases.get(f.shard()).holder)) {
          count("sharder fenced a held Lease");
        }
        leases.get(f.shard()).holder = "sharder";
        leases.get(f.shard()).renew = now;
      } else if (a instanceof Assign as) {
        relabel(as.pool(), as.shard());
      } else if (a instanceof Move m) {
        count("move");
        relabel(m.pool(), m.to());
      }
    }
    // old owners hand over what was relabelled away (the pool left their informer), each in this
    // tick or a later one (a watch event and a status write take their time)
    for (PoolPlacement p : pools.values()) {
      Replica owner = replicas.get(inStatus.get(p.id()));
      if (owner != null
          && active(owner)
          && !owner.name.equals(p.shard())
          && owner.seen.contains(p.id())) {
        long since = handingOver.computeIfAbsent(p.id(), k -> now);
        if (random.nextBoolean() || now - since >= 3_000) {
          count("handed over in status");
          inStatus.put(p.id(), p.shard());
          owner.seen.remove(p.id());
          handingOver.remove(p.id());
        }
      } else {
        handingOver.remove(p.id());
      }
    }
    for (PoolPlacement p : pools.values()) {
      Replica labelled = p.shard() == null ? null : replicas.get(p.shard());
      if (labelled != null && !labelled.crashed && !labelled.partitioned) {
        labelled.seen.add(p.id());
      }
    }
    // a pool that left a replica's informer: its handoff stops tracking a wait for it
    for (Replica r : replicas.values()) {
      if (!r.crashed && !r.partitioned) {
        for (String id : List.copyOf(r.waitingFor)) {
          PoolPlacement p = pools.get(id);
          if (p == null || !r.name.equals(p.shard())) {
            r.handoff.forget(key(id));
            r.waitingFor.remove(id);
          }
        }
      }
    }
    // new owners start what is labelled for them when their PoolHandoff lets them (as
    // BackendPoolReconciler asks it): the Lease held, and status naming them, or its shard gone, or
    // a Lease duration waited
    for (PoolPlacement p : pools.values()) {
      Replica owner = p.shard() == null ? null : replicas.get(p.shard());
      String named = inStatus.get(p.id());
      if (owner == null || owner.crashed || owner.partitioned || !owner.handoff.mayRun()) {
        continue;
      }
      boolean handedOver = named == null || named.equals(owner.name);
      ShardState formerState = shardState(named).orElse(null);
      if (owner.handoff.awaitedOwner(resource(p.id(), named)) != null) {
        owner.waitingFor.add(p.id());
      } else {
        owner.waitingFor.remove(p.id());
        if (!handedOver) {
          count(
              formerState == ShardState.GONE
                  ? "started after the former shard was gone"
                  : "waited a Lease duration, then started");
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

  /** A shard's state from its simulated Lease, as {@code ShardRing.state} gives it. */
  private Optional<ShardState> shardState(String shard) {
    Lease l = shard == null ? null : leases.get(shard);
    return l == null
        ? Optional.empty()
        : Optional.of(ShardState.of(shard, l.holder, l.renew, DURATION, now));
  }

  /**
   * The pool as the new owner's informer holds it: only its name and status.shard matter (one
   * object a pool, its status.shard set on each call: a CustomResource is slow to construct).
   */
  private BackendPool resource(String id, String inStatus) {
    BackendPool p =
        resources.computeIfAbsent(
            id,
            k -> {
              BackendPool made = new BackendPool();
              made.getMetadata().setNamespace(key(k).namespace());
              made.getMetadata().setName(key(k).name());
              made.setStatus(new BackendPoolStatus());
              return made;
            });
    p.getStatus().setShard(inStatus);
    return p;
  }

  private static PoolKey key(String id) {
    int slash = id.indexOf('/');
    return new PoolKey(id.substring(0, slash), id.substring(slash + 1));
  }

  /** A new process under the replica's name: its own PoolHandoff, on this model's clock. */
  private void incarnate(Replica r) {
    r.waitingFor.clear();
    r.handoff =
        new PoolHandoff(
            null, r.name, () -> active(r), this::shardState, () -> now, CONFIG.leaseDurationMs());
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
    for (PoolPlacement p : pools.values()) {
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
    PoolPlacement p = pools.get(id);
    pools.put(id, new PoolPlacement(id, p.uid(), shard));
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
  private boolean fence(Replica r) {
    if (r.fenced) {
      return false;
    }
    r.fenced = true;
    r.seen.clear();
    r.sweep = true;
    incarnate(r);
    return true;
  }

  private void restart(Replica r) {
    count("restart");
    r.crashed = false;
    r.partitioned = false;
    r.seen.clear();
    r.lastRenewOk = now;
    r.lastRenewTry = Long.MIN_VALUE / 2;
    r.fenced = true; // until its first renewal
    r.sweep = true;
    incarnate(r);
  }

  private void join(String name) {
    Replica r = new Replica(name);
    r.lastRenewOk = now;
    incarnate(r);
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
        id, new PoolPlacement(id, new UUID(random.nextLong(), random.nextLong()).toString(), null));
  }
}
