package dev.vigil.shard;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.runtime.PoolKey;
import dev.vigil.shard.ShardPlanner.ShardState;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An owner's side of a move (docs/design.md §7, docs/scale.md): ownership is the {@code
 * vigil.dev/shard} label together with {@code status.shard}, so a planned move costs two API
 * writes, the sharder's relabel and the old owner's status write.
 *
 * <ul>
 *   <li><b>Leaving</b>: a pool relabelled away leaves this replica's informer. If its status still
 *       names this shard, the owner (runtime sealed first: no outcome is applied after this) writes
 *       its last status naming the label's shard as owner: that write hands the pool over. A status
 *       naming another shard means someone else already holds it: nothing is written.
 *   <li><b>Arriving</b>: a pool labelled for this shard whose status names another shard whose
 *       Lease is still held in its name (live, or expired and not yet fenced) is not started: the
 *       owner waits for that shard's handover write (or for the shard to be gone), so two replicas
 *       never run a pool at once, and starts from the status it was handed (and from the slices).
 *   <li><b>Restarted</b> under the same name: the replica's informer no longer sees pools moved
 *       away while it was down, so before starting it {@link #sweep sweeps} every pool once and
 *       hands over those whose status still names it.
 * </ul>
 *
 * <p>This class decides whether and to whom a pool is handed over, from what it reads; the write
 * itself is the status publisher's ({@link HandoverWriter}, {@code
 * publish/PoolStatusPublisher#handOver}), so a pool's status has one writer, and the handover takes
 * a {@code HANDOVER} token of the one write budget.
 */
public final class PoolHandoff {
  private static final Logger LOG = LoggerFactory.getLogger(PoolHandoff.class);
  private static final int WRITE_ATTEMPTS = 5;
  private static final long RETRY_MS = 200;

  /**
   * Writes the status that hands {@code current} (as read: a PUT on its resourceVersion, so a
   * conflict throws) to {@code owner} (null: nobody).
   */
  @FunctionalInterface
  public interface HandoverWriter {
    void write(BackendPool current, String owner) throws InterruptedException;
  }

  private final KubernetesClient client;
  private final String identity;
  private final BooleanSupplier writable;
  private final Function<String, Optional<ShardState>> shards;
  private final LongSupplier clock;
  private final long giveUpAfterMs;
  private final Map<PoolKey, Long> waitingSince = new ConcurrentHashMap<>();

  /**
   * @param writable whether this replica holds its shard Lease (else it must not run pools)
   * @param shards a shard's Lease state; empty when not known yet (the Leases not listed)
   * @param giveUpAfterMs how long to wait for a handover from a shard that stays live (a Lease
   *     duration)
   */
  public PoolHandoff(
      KubernetesClient client,
      String identity,
      BooleanSupplier writable,
      Function<String, Optional<ShardState>> shards,
      LongSupplier clock,
      long giveUpAfterMs) {
    this.client = client;
    this.identity = identity;
    this.writable = writable;
    this.shards = shards;
    this.clock = clock;
    this.giveUpAfterMs = giveUpAfterMs;
  }

  /** False while this replica does not hold its shard Lease: it must not start or run pools. */
  public boolean mayRun() {
    return writable.getAsBoolean();
  }

  /** This replica's shard name. */
  public String identity() {
    return identity;
  }

  /**
   * The shard this replica must wait for before it runs {@code pool}, or null: the pool's status
   * names a shard other than this one whose Lease is still held in its name (or not known yet), and
   * this replica has waited less than {@code giveUpAfterMs} for it.
   */
  public String awaitedOwner(BackendPool pool) {
    PoolKey key = key(pool);
    String owner = pool.getStatus() == null ? null : pool.getStatus().getShard();
    if (owner == null || owner.equals(identity)) {
      waitingSince.remove(key);
      return null;
    }
    Optional<ShardState> state = shards.apply(owner);
    if (state.isPresent() && state.get() == ShardState.GONE) {
      waitingSince.remove(key);
      return null;
    }
    long now = clock.getAsLong();
    long since = waitingSince.computeIfAbsent(key, k -> now);
    if (now - since < giveUpAfterMs) {
      return owner;
    }
    // A shard that had the pool hands it over within a second or two, or loses its Lease (and
    // exits) within the Lease's renew deadline; one still live after a whole Lease duration never
    // saw the pool in this incarnation (it was cut off from the API server while the pool passed
    // through it), so it holds nothing of it: start from the status as it is.
    waitingSince.remove(key);
    LOG.warn(
        "BackendPool {}: shard {} ({}) did not hand it over within {} s; starting from its status",
        key,
        owner,
        state.map(Enum::name).orElse("Lease not listed"),
        giveUpAfterMs / 1000);
    return null;
  }

  /** The pool left this replica (or was deleted): stop tracking a wait for it. */
  public void forget(PoolKey key) {
    waitingSince.remove(key);
  }

  /**
   * Hands over a pool that left this replica's informer: reads it and, if it still exists and its
   * status names this shard, has {@code handover} write the status that names the shard its label
   * now names. Retries a conflict (read again) a few times. The caller has sealed the pool's
   * runtime.
   *
   * @return true when a handover status was written
   */
  public boolean handOver(PoolKey key, HandoverWriter handover) throws InterruptedException {
    for (int attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      if (!mayRun()) {
        LOG.info(
            "BackendPool {} left this shard while its Lease is not held: nothing written", key);
        return false;
      }
      try {
        BackendPool current =
            client
                .resources(BackendPool.class)
                .inNamespace(key.namespace())
                .withName(key.name())
                .get();
        if (current == null || !identity.equals(shardInStatus(current))) {
          return false; // deleted, or another shard holds it already
        }
        handover.write(current, label(current));
        LOG.info("BackendPool {} handed over to shard {}", key, label(current));
        return true;
      } catch (KubernetesClientException e) {
        LOG.info(
            "BackendPool {}: handover status not written (attempt {} of {}: {} {})",
            key,
            attempt,
            WRITE_ATTEMPTS,
            e.getCode(),
            e.getMessage());
        Thread.sleep(RETRY_MS * attempt);
      }
    }
    LOG.warn(
        "BackendPool {}: handover status not written after {} attempts; its next owner starts"
            + " once this shard's Lease is gone",
        key,
        WRITE_ATTEMPTS);
    return false;
  }

  /**
   * Once at start, before this replica runs anything: hands over every pool whose status names this
   * shard but whose label names another (moved while this replica, under the same name, was down).
   * Lists page by page.
   *
   * @param namespaces the pools' namespaces; empty: all
   * @return the pools handed over
   */
  public int sweep(Set<String> namespaces, HandoverWriter handover) throws InterruptedException {
    int handed = 0;
    for (String ns : namespaces.isEmpty() ? Set.<String>of("") : namespaces) {
      String next = null;
      do {
        var list =
            (ns.isEmpty()
                    ? client.resources(BackendPool.class).inAnyNamespace()
                    : client.resources(BackendPool.class).inNamespace(ns))
                .list(new ListOptionsBuilder().withLimit(250L).withContinue(next).build());
        for (BackendPool p : list.getItems()) {
          String label = label(p);
          if (identity.equals(shardInStatus(p)) && !identity.equals(label)) {
            try {
              handover.write(p, label);
              handed++;
            } catch (KubernetesClientException e) {
              LOG.warn(
                  "BackendPool {}: leftover handover to {} not written ({} {}); its next owner"
                      + " waits",
                  key(p),
                  label,
                  e.getCode(),
                  e.getMessage());
            }
          }
        }
        next = list.getMetadata() == null ? null : list.getMetadata().getContinue();
      } while (next != null && !next.isEmpty());
    }
    if (handed > 0) {
      LOG.info("handed over {} pools moved away while this shard was down", handed);
    }
    return handed;
  }

  private static String shardInStatus(BackendPool pool) {
    return pool.getStatus() == null ? null : pool.getStatus().getShard();
  }

  private static String label(BackendPool pool) {
    Map<String, String> labels = pool.getMetadata().getLabels();
    return labels == null ? null : labels.get(ShardConfig.SHARD_LABEL);
  }

  private static PoolKey key(BackendPool pool) {
    return new PoolKey(pool.getMetadata().getNamespace(), pool.getMetadata().getName());
  }
}
