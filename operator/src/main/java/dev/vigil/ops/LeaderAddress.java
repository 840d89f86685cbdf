package dev.vigil.ops;

import dev.vigil.publish.WriteBudget;
import dev.vigil.shard.ShardLease;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the unsharded leader takes outcomes (docs/passive.md, "Routing between replicas"): the
 * leader writes its outcome address on the leader Lease, as each sharded replica carries its own on
 * its shard Lease, and a standby reads it from a watch of that one Lease, so it forwards a
 * reporter's outcomes to the leader instead of answering 503.
 *
 * <p>Two annotations: {@value #ADDRESS} ({@code host:port} of the leader's outcome port) and
 * {@value #HOLDER} (whose address it is). JOSDK's elector renews the Lease with JSON merge patches
 * of its spec, which leave annotations alone; a new holder's Lease keeps naming the old holder's
 * address until the new one writes its own, so an address counts only while {@value #HOLDER} equals
 * the Lease's holder and the Lease is live. The write is one JSON merge patch of the annotations (a
 * {@link WriteBudget.Priority#LEASE} token) per leadership, made again at a later renewal if it
 * failed; it may cost the elector one renewal that answers 409 (the next one, a retry period later,
 * goes through).
 *
 * <p>Threads: the Lease's informer thread (its events, the write they call for), the thread that
 * calls {@link #advertise} (the write, when the Lease is already held), and the intake's event
 * loops ({@link #leaderElsewhere}: one volatile read).
 */
public final class LeaderAddress implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderAddress.class);

  /** The leader's outcome address, {@code host:port} ({@code [v6]:port} for IPv6). */
  public static final String ADDRESS = "vigil.dev/address";

  /** The identity whose address {@link #ADDRESS} is. */
  public static final String HOLDER = "vigil.dev/address-holder";

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final String namespace;
  private final String name;
  private final String identity;
  private final LongSupplier clock;
  private final AtomicBoolean writing = new AtomicBoolean();
  private volatile Lease lease;
  private volatile String address = "";
  private SharedIndexInformer<Lease> informer;

  /**
   * @param identity this replica's identity on the Lease (the Pod's name)
   */
  public LeaderAddress(
      KubernetesClient client,
      WriteBudget budget,
      String namespace,
      String name,
      String identity,
      LongSupplier clock) {
    this.client = client;
    this.budget = budget;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity;
    this.clock = clock;
  }

  /** Watches the leader Lease (without waiting for its list). */
  public LeaderAddress start() {
    informer =
        client
            .leases()
            .inNamespace(namespace)
            .withName(name)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Lease l) {
                    seen(l);
                  }

                  @Override
                  public void onUpdate(Lease old, Lease l) {
                    seen(l);
                  }

                  @Override
                  public void onDelete(Lease l, boolean unknownFinalState) {
                    lease = null;
                  }
                });
    return this;
  }

  private void seen(Lease l) {
    lease = l;
    writeIfDue(l);
  }

  /**
   * This replica's outcome address ({@code host:port}): written on the Lease now if this replica
   * holds it, else once it does.
   */
  public void advertise(String hostPort) {
    address = hostPort;
    Lease l = lease;
    if (l != null) {
      writeIfDue(l);
    }
  }

  /**
   * The leader's outcome address when another replica holds a live Lease and has written its
   * address on it; "" otherwise (no leader, this replica leads, or the new leader has not written
   * its address yet).
   */
  public String leaderElsewhere() {
    return elsewhere(lease, identity, clock.getAsLong());
  }

  /** {@link #leaderElsewhere} for {@code lease} as seen by {@code self} at {@code now}. */
  static String elsewhere(Lease lease, String self, long now) {
    String holder = holder(lease);
    if (holder.isEmpty() || holder.equals(self) || ShardLease.free(lease, now)) {
      return "";
    }
    Map<String, String> a = lease.getMetadata().getAnnotations();
    if (a == null || !holder.equals(a.get(HOLDER))) {
      return "";
    }
    return a.getOrDefault(ADDRESS, "");
  }

  private static String holder(Lease lease) {
    if (lease == null || lease.getSpec() == null || lease.getSpec().getHolderIdentity() == null) {
      return "";
    }
    return lease.getSpec().getHolderIdentity();
  }

  /** Whether {@code lease}, held by {@code self}, lacks {@code address} (and so needs a write). */
  static boolean due(Lease lease, String self, String address) {
    if (address.isEmpty() || !self.equals(holder(lease))) {
      return false;
    }
    Map<String, String> a = lease.getMetadata().getAnnotations();
    return a == null || !self.equals(a.get(HOLDER)) || !address.equals(a.get(ADDRESS));
  }

  private void writeIfDue(Lease l) {
    String mine = address;
    if (!due(l, identity, mine) || !writing.compareAndSet(false, true)) {
      return;
    }
    try {
      budget.leaseWrite();
      client
          .leases()
          .inNamespace(namespace)
          .withName(name)
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              Serialization.asJson(
                  Map.of(
                      "metadata", Map.of("annotations", Map.of(HOLDER, identity, ADDRESS, mine)))));
      LOG.info("leading: taking other replicas' outcomes at {}", mine);
    } catch (KubernetesClientException e) {
      LOG.warn(
          "could not write the outcome address on the leader Lease {}/{} (tried again at the next"
              + " renewal): {} {}",
          namespace,
          name,
          e.getCode(),
          e.getMessage());
    } finally {
      writing.set(false);
    }
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
  }
}
