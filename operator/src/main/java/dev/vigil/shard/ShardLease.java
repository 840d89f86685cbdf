package dev.vigil.shard;

import dev.vigil.publish.WriteBudget;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This replica's shard Lease {@code vigil-shard-<identity>} (label {@code vigil.dev/ring}), created
 * and renewed every renew period with optimistic concurrency (docs/design.md §7). The replica may
 * write only while it holds the Lease and renewed it within the renew deadline (shorter than the
 * Lease's duration, after which the sharder may take it over): when either fails, {@code onLost}
 * runs once and the replica stops writing (self-fencing). A lost Lease is never taken back by this
 * object; in a cluster the replica exits and its restart starts clean. Every write takes a {@link
 * WriteBudget.Priority#LEASE} token, which never waits: a renewal is never late for a backlog of
 * other writes. Each renewal (and the create) also carries this replica's {@link CheckerReport}
 * (its zone and failing share, docs/design.md §8) as annotations: no write of its own.
 *
 * <p>{@link #tick()} runs on one scheduler thread; {@link #writable()} from any thread.
 */
public final class ShardLease {
  private static final Logger LOG = LoggerFactory.getLogger(ShardLease.class);

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final ShardConfig config;
  private final String identity;
  private final LongSupplier clock;
  private final Runnable onLost;
  private final Supplier<CheckerReport> report;
  private final AtomicBoolean lost = new AtomicBoolean();
  private volatile boolean held;
  private volatile long renewedAt;
  private ScheduledFuture<?> task;

  /**
   * @param clock milliseconds; the Lease's times and the renew deadline are read against it
   * @param onLost runs once, on the tick thread, when the replica must stop writing
   */
  public ShardLease(
      KubernetesClient client,
      WriteBudget budget,
      ShardConfig config,
      String identity,
      LongSupplier clock,
      Runnable onLost) {
    this(client, budget, config, identity, clock, onLost, () -> CheckerReport.UNKNOWN);
  }

  /**
   * @param report what the Lease carries about this replica as a checker, asked once per tick (the
   *     failing share takes its sample then)
   */
  public ShardLease(
      KubernetesClient client,
      WriteBudget budget,
      ShardConfig config,
      String identity,
      LongSupplier clock,
      Runnable onLost,
      Supplier<CheckerReport> report) {
    this.client = client;
    this.budget = budget;
    this.config = config;
    this.identity = identity;
    this.clock = clock;
    this.onLost = onLost;
    this.report = report;
  }

  /** The Lease's name for a shard. */
  public static String leaseName(String shard) {
    return ShardConfig.LEASE_PREFIX + shard;
  }

  /** Takes the Lease now (waiting for it while another holder's is unexpired), then renews it. */
  public ShardLease start(ScheduledExecutorService timer) {
    task =
        timer.scheduleWithFixedDelay(
            this::tick, 0, config.renewPeriod().toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  /** True while this replica holds its Lease and renewed it within the renew deadline. */
  public boolean writable() {
    return held && !lost.get() && clock.getAsLong() - renewedAt < config.renewDeadlineMs();
  }

  /** True once the Lease was held and then lost (this replica stays fenced). */
  public boolean lost() {
    return lost.get();
  }

  /** One renewal (or acquisition); then the deadline check. Never throws. */
  public void tick() {
    if (lost.get()) {
      return;
    }
    long start = clock.getAsLong();
    try {
      if (acquireOrRenew(start, report.get())) {
        held = true;
        renewedAt = start;
      } else if (held) {
        LOG.warn("shard Lease {} was taken over: this replica stops writing", leaseName(identity));
        held = false;
        lose();
        return;
      }
    } catch (KubernetesClientException e) {
      LOG.warn(
          "could not renew shard Lease {}: {} {}",
          leaseName(identity),
          e.getCode(),
          e.getMessage());
    } catch (RuntimeException e) {
      LOG.warn("could not renew shard Lease {}: {}", leaseName(identity), e.toString());
    }
    if (held && !writable()) {
      LOG.warn(
          "shard Lease {} not renewed within {} ms: this replica stops writing",
          leaseName(identity),
          config.renewDeadlineMs());
      lose();
    }
  }

  private void lose() {
    if (lost.compareAndSet(false, true)) {
      onLost.run();
    }
  }

  /** Gives the Lease up (a graceful stop): the sharder moves this shard's pools at once. */
  public void release() {
    if (task != null) {
      task.cancel(false);
    }
    if (!held || lost.get()) {
      return;
    }
    held = false;
    try {
      Lease lease = resource().get();
      if (lease != null && identity.equals(lease.getSpec().getHolderIdentity())) {
        lease.getSpec().setHolderIdentity(null);
        lease.getSpec().setRenewTime(time(clock.getAsLong()));
        budget.leaseWrite();
        client.leases().inNamespace(config.namespace()).resource(lease).update();
      }
    } catch (RuntimeException e) {
      LOG.warn("could not release shard Lease {}: {}", leaseName(identity), e.toString());
    }
  }

  private boolean acquireOrRenew(long now, CheckerReport checker) {
    Lease lease = resource().get();
    if (lease == null) {
      create(now, checker);
      return true;
    }
    var spec = lease.getSpec();
    boolean mine = identity.equals(spec.getHolderIdentity());
    if (!mine) {
      if (held || !free(lease, now)) {
        return false; // someone took it over (the sharder fenced this shard), or it is not free
      }
      spec.setHolderIdentity(identity);
      spec.setAcquireTime(time(now));
      spec.setLeaseTransitions(
          spec.getLeaseTransitions() == null ? 1 : spec.getLeaseTransitions() + 1);
    }
    spec.setRenewTime(time(now));
    spec.setLeaseDurationSeconds(config.leaseDurationSeconds());
    if (lease.getMetadata().getLabels() == null
        || !config.ring().equals(lease.getMetadata().getLabels().get(ShardConfig.RING_LABEL))) {
      lease
          .getMetadata()
          .setLabels(
              new java.util.HashMap<>(java.util.Map.of(ShardConfig.RING_LABEL, config.ring())));
    }
    checker.annotate(lease.getMetadata());
    budget.leaseWrite();
    client.leases().inNamespace(config.namespace()).resource(lease).update();
    return true;
  }

  private void create(long now, CheckerReport checker) {
    Lease lease =
        new LeaseBuilder()
            .withNewMetadata()
            .withName(leaseName(identity))
            .withNamespace(config.namespace())
            .addToLabels(ShardConfig.RING_LABEL, config.ring())
            .endMetadata()
            .withNewSpec()
            .withHolderIdentity(identity)
            .withLeaseDurationSeconds(config.leaseDurationSeconds())
            .withAcquireTime(time(now))
            .withRenewTime(time(now))
            .withLeaseTransitions(0)
            .endSpec()
            .build();
    checker.annotate(lease.getMetadata());
    budget.leaseWrite();
    client.leases().inNamespace(config.namespace()).resource(lease).create();
  }

  /**
   * Nobody holds the Lease, or its holder stopped renewing it a whole duration ago (a shard's, or
   * the leader Lease: {@code ops.LeaderAddress}).
   */
  public static boolean free(Lease lease, long now) {
    var spec = lease.getSpec();
    return spec.getHolderIdentity() == null
        || spec.getHolderIdentity().isEmpty()
        || spec.getRenewTime() == null
        || now - millis(spec.getRenewTime()) >= durationMs(lease);
  }

  private io.fabric8.kubernetes.client.dsl.Resource<Lease> resource() {
    return client.leases().inNamespace(config.namespace()).withName(leaseName(identity));
  }

  /** A started informer on the ring's Leases (label {@code vigil.dev/ring=<ring>}). */
  static io.fabric8.kubernetes.client.informers.SharedIndexInformer<Lease> informRing(
      KubernetesClient client, ShardConfig config) {
    return client
        .leases()
        .inNamespace(config.namespace())
        .withLabel(ShardConfig.RING_LABEL, config.ring())
        .inform();
  }

  /**
   * The shards of any ring whose Lease in {@code namespace} is live at {@code nowMs}: a sharded
   * Vigil runs there (an unsharded replica must not lead beside it, {@code LeaderLease}).
   */
  public static java.util.List<String> liveShards(
      KubernetesClient client, String namespace, long nowMs) {
    var leases =
        client.leases().inNamespace(namespace).withLabel(ShardConfig.RING_LABEL).list().getItems();
    return states(leases, nowMs).entrySet().stream()
        .filter(e -> e.getValue() == ShardPlanner.ShardState.LIVE)
        .map(java.util.Map.Entry::getKey)
        .sorted()
        .toList();
  }

  /** Every shard's state from the ring's Leases (other Leases are skipped), at {@code now}. */
  static java.util.Map<String, ShardPlanner.ShardState> states(
      java.util.Collection<Lease> leases, long now) {
    java.util.Map<String, ShardPlanner.ShardState> states = new java.util.HashMap<>();
    for (Lease lease : leases) {
      String name = lease.getMetadata().getName();
      if (!name.startsWith(ShardConfig.LEASE_PREFIX) || lease.getSpec() == null) {
        continue;
      }
      String shard = name.substring(ShardConfig.LEASE_PREFIX.length());
      var spec = lease.getSpec();
      states.put(
          shard,
          ShardPlanner.ShardState.of(
              shard,
              spec.getHolderIdentity(),
              spec.getRenewTime() == null ? 0 : millis(spec.getRenewTime()),
              durationMs(lease),
              now));
    }
    return states;
  }

  static long durationMs(Lease lease) {
    Integer s = lease.getSpec().getLeaseDurationSeconds();
    return s == null ? 0 : s * 1000L;
  }

  static ZonedDateTime time(long millis) {
    return Instant.ofEpochMilli(millis).atZone(ZoneOffset.UTC);
  }

  static long millis(ZonedDateTime time) {
    return time.toInstant().toEpochMilli();
  }
}
