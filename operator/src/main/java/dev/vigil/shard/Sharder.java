package dev.vigil.shard;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.publish.WriteBudget;
import dev.vigil.shard.ShardPlanner.Action;
import dev.vigil.shard.ShardPlanner.Assign;
import dev.vigil.shard.ShardPlanner.Fence;
import dev.vigil.shard.ShardPlanner.Move;
import dev.vigil.shard.ShardPlanner.PoolPlacement;
import dev.vigil.shard.ShardPlanner.ShardState;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sharder (docs/design.md §7), run by the leader: watches the ring's shard Leases and every
 * BackendPool (keeping only UID and labels of each, about 300 bytes a pool), asks the {@link
 * ShardPlanner} what to write, and writes it: a fenced Lease, or a pool's {@code vigil.dev/shard}
 * label (a JSON merge patch carrying the resourceVersion it was planned from, so a concurrent
 * change makes the API server refuse the write and the next round re-plans). A planned move is that
 * one write; the old owner's status write that hands the pool over is the other ({@link
 * PoolHandoff}). One round a second, on one thread, whose label patches go out up to {@link
 * #WRITERS} at a time; {@link #round()} for tests with a manual clock. Every write takes a token of
 * the {@link WriteBudget}: a relabel {@link WriteBudget.Priority#HANDOVER} (before slice writes, in
 * the pool's namespace's turn), a fence or a gone shard's Lease deleted ({@link RingLeases}) {@link
 * WriteBudget.Priority#LEASE} (never waits).
 */
public final class Sharder {
  private static final Logger LOG = LoggerFactory.getLogger(Sharder.class);
  private static final long ROUND_MS = 1_000;

  /** Label patches of one round in flight at once. */
  static final int WRITERS = 8;

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final ShardConfig config;
  private final Set<String> namespaces;
  private final LongSupplier clock;
  private final ShardPlanner planner;
  private final RingLeases ringLeases;
  private final Counter moves;
  private final Counter assignments;
  private final Counter fences;
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private SharedIndexInformer<Lease> leases;
  private final List<SharedIndexInformer<BackendPool>> pools = new ArrayList<>();

  /** Pools written this round or before, until their informer event arrives: id -> written. */
  private final Map<String, PoolPlacement> pending = new ConcurrentHashMap<>();

  private final Executor writers;
  private final ExecutorService ownWriters;
  private ScheduledFuture<?> task;
  private volatile int liveShards;

  /** Whether expired Leases wait, after this process stood still (round thread only). */
  private final FencingHold hold;

  /**
   * @param namespaces the pools' namespaces; empty: all
   */
  public Sharder(
      KubernetesClient client,
      WriteBudget budget,
      ShardConfig config,
      Set<String> namespaces,
      LongSupplier clock,
      MeterRegistry meters) {
    this(client, budget, config, namespaces, clock, meters, null);
  }

  /**
   * @param writers runs the label patches of a round; null: a pool of {@link #WRITERS} daemon
   *     threads of the sharder's own, idle ones let go
   */
  Sharder(
      KubernetesClient client,
      WriteBudget budget,
      ShardConfig config,
      Set<String> namespaces,
      LongSupplier clock,
      MeterRegistry meters,
      Executor writers) {
    this.ownWriters = writers == null ? ownWriterPool() : null;
    this.writers = writers == null ? ownWriters : writers;
    this.client = client;
    this.budget = budget;
    this.config = config;
    this.namespaces = namespaces;
    this.clock = clock;
    this.planner = new ShardPlanner(config.movesPerMinuteFraction());
    this.ringLeases = new RingLeases(client, budget, config);
    this.hold = new FencingHold(config);
    this.moves =
        counter(
            meters,
            "vigil_shard_moves_total",
            "Planned pool moves the sharder made (relabels away from a live owner)");
    this.assignments =
        counter(
            meters,
            "vigil_shard_assignments_total",
            "Pools the sharder assigned (new, or from a gone shard)");
    this.fences =
        counter(meters, "vigil_shard_fences_total", "Expired shard Leases the sharder took over");
  }

  /** {@link #WRITERS} daemon threads of the sharder's own, idle ones let go. */
  private static ExecutorService ownWriterPool() {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor own =
        new ThreadPoolExecutor(
            WRITERS,
            WRITERS,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "vigil-sharder-write-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    own.allowCoreThreadTimeOut(true);
    return own;
  }

  private static Counter counter(MeterRegistry meters, String name, String description) {
    return Counter.builder(name).description(description).register(meters);
  }

  /** Starts the informers; rounds begin once they have synced. */
  public synchronized Sharder start(ScheduledExecutorService timer) {
    startInformers();
    task = timer.scheduleWithFixedDelay(this::safeRound, ROUND_MS, ROUND_MS, TimeUnit.MILLISECONDS);
    return this;
  }

  /** Starts the Lease and pool informers (without rounds). */
  public synchronized void startInformers() {
    ResourceEventHandler<HasMetadata> forget = forgetPendingOnEvent();
    leases = ShardLease.informRing(client, config);
    informers.add(leases);
    for (var source : PoolDirectory.sources(client, namespaces)) {
      SharedIndexInformer<BackendPool> informer = source.runnableInformer(0);
      informer.itemStore(
          new ReducedStateItemStore<>(
              ReducedStateItemStore.NAME_KEY_STATE,
              BackendPool.class,
              client.getKubernetesSerialization(),
              "metadata.uid",
              "metadata.labels"));
      informer.addEventHandler(forget);
      informer.start();
      pools.add(informer);
      informers.add(informer);
    }
  }

  /** Any event of an object ends its pending write: the informer has caught up with it. */
  private ResourceEventHandler<HasMetadata> forgetPendingOnEvent() {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(HasMetadata obj) {
        pending.remove(id(obj));
      }

      @Override
      public void onUpdate(HasMetadata before, HasMetadata now) {
        pending.remove(id(now));
      }

      @Override
      public void onDelete(HasMetadata obj, boolean unknown) {
        pending.remove(id(obj));
      }
    };
  }

  public synchronized void stop() {
    if (task != null) {
      task.cancel(false);
    }
    informers.forEach(SharedIndexInformer::stop);
    informers.clear();
    pools.clear();
    if (ownWriters != null) {
      ownWriters.shutdown();
    }
  }

  /** Live shards seen in the last round. */
  public int liveShards() {
    return liveShards;
  }

  /** True once every informer has listed. */
  public boolean synced() {
    return !informers.isEmpty() && informers.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  private void safeRound() {
    try {
      round();
    } catch (RuntimeException e) {
      LOG.warn("sharder round failed: {}", e.toString());
    }
  }

  /** One round: plan from the caches, write. Returns the actions planned (tests). */
  public synchronized List<Action> round() {
    if (!synced()) {
      return List.of();
    }
    long now = clock.getAsLong();
    Map<String, ShardState> shards = shardStates(now);
    if (hold.holds(now)) {
      shards.replaceAll((shard, state) -> state == ShardState.EXPIRED ? ShardState.LIVE : state);
    }
    liveShards = (int) shards.values().stream().filter(s -> s == ShardState.LIVE).count();
    Map<String, PoolPlacement> current = placements();
    List<Action> actions = new ArrayList<>(planner.plan(current.values(), shards, now));
    boolean fenced = fenceExpired(actions, shards, now);
    writeLabels(actions, now);
    if (fenced) {
      // the fenced shards are gone now: their pools move in this round
      withPendingWrites(current);
      List<Action> moves = planner.plan(current.values(), shards, now);
      writeLabels(moves, now);
      actions.addAll(moves);
    }
    ringLeases.forgetGone(leases.getStore().list(), shards, current.values(), now);
    hold.roundEnded(clock.getAsLong());
    return actions;
  }

  /** Every cached pool's placement, a pending write's placement over the cached one. */
  private Map<String, PoolPlacement> placements() {
    Map<String, PoolPlacement> current = new HashMap<>();
    for (SharedIndexInformer<BackendPool> informer : pools) {
      for (BackendPool p : informer.getStore().list()) {
        Map<String, String> labels = p.getMetadata().getLabels();
        String id = id(p);
        current.put(
            id,
            new PoolPlacement(
                id,
                p.getMetadata().getUid(),
                labels == null ? null : labels.get(ShardConfig.SHARD_LABEL)));
      }
    }
    withPendingWrites(current);
    return current;
  }

  /** Replaces the placement of each pool written but not seen by its informer yet. */
  private void withPendingWrites(Map<String, PoolPlacement> current) {
    pending.forEach((id, written) -> current.computeIfPresent(id, (k, v) -> written));
  }

  /** Writes the planned fences, marking each fenced shard gone; true when any was fenced. */
  private boolean fenceExpired(List<Action> actions, Map<String, ShardState> shards, long now) {
    boolean fenced = false;
    for (Action a : actions) {
      if (a instanceof Fence f && apply(f, now)) {
        shards.put(f.shard(), ShardState.GONE);
        fenced = true;
      }
    }
    return fenced;
  }

  /**
   * Writes the round's label patches, up to {@link #WRITERS} at a time, and waits for all of them:
   * a dead replica's pools are all relabelled in the round that fenced it, in a fraction of the
   * time one patch after another took (ShardingE2E: 112 pools at 25-50 ms each under load).
   */
  private void writeLabels(List<Action> actions, long now) {
    CompletableFuture<?>[] writes =
        actions.stream()
            .filter(a -> !(a instanceof Fence))
            .map(a -> CompletableFuture.runAsync(() -> apply(a, now), writers))
            .toArray(CompletableFuture[]::new);
    CompletableFuture.allOf(writes).join();
  }

  private Map<String, ShardState> shardStates(long now) {
    return ShardLease.states(leases.getStore().list(), now);
  }

  /** Writes one action; false when the API server refused it (the next round re-plans). */
  private boolean apply(Action action, long now) {
    try {
      if (action instanceof Fence f) {
        return fence(f.shard(), now);
      } else if (action instanceof Assign a) {
        patch(a.pool(), a.shard());
        assignments.increment();
      } else if (action instanceof Move m) {
        patch(m.pool(), m.to());
        moves.increment();
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // stopping
      return false;
    } catch (KubernetesClientException e) {
      LOG.info(
          "sharder: {} not written ({} {}); next round re-plans",
          action,
          e.getCode(),
          e.getMessage());
      return false;
    }
  }

  /** Takes over an expired shard Lease, so its replica can no longer renew it. */
  private boolean fence(String shard, long now) {
    Lease lease =
        leases.getStore().getByKey(config.namespace() + "/" + ShardLease.leaseName(shard));
    if (lease == null) {
      return false;
    }
    ringLeases.fence(lease, now);
    fences.increment();
    LOG.info("shard {} missed its Lease; fenced it, its pools move now", shard);
    return true;
  }

  private void patch(String id, String shard) throws InterruptedException {
    int slash = id.indexOf('/');
    String ns = id.substring(0, slash);
    String name = id.substring(slash + 1);
    BackendPool cached = cached(ns, name);
    if (cached == null) {
      return;
    }
    budget.acquire(WriteBudget.Priority.HANDOVER, ns);
    ShardOwner.relabel(client, ns, name, shard, cached.getMetadata().getResourceVersion());
    pending.put(id, new PoolPlacement(id, cached.getMetadata().getUid(), shard));
  }

  private BackendPool cached(String ns, String name) {
    for (SharedIndexInformer<BackendPool> informer : pools) {
      BackendPool p = informer.getStore().getByKey(ns + "/" + name);
      if (p != null) {
        return p;
      }
    }
    return null;
  }

  private static String id(HasMetadata obj) {
    return obj.getMetadata().getNamespace() + "/" + obj.getMetadata().getName();
  }
}
