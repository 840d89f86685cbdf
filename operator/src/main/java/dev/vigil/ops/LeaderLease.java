package dev.vigil.ops;

import dev.vigil.publish.WriteBudget;
import dev.vigil.shard.ShardLease;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The unsharded replica's leader election (JOSDK's, on one Lease) and its graceful end.
 *
 * <p>JOSDK 5.3.2 gets two things wrong for a stopping replica: with {@code exitOnStopLeading} its
 * stop-leading path calls {@code System.exit} (which, from inside the JVM's shutdown hook, waits on
 * that hook forever: a SIGTERM never ended a leading replica), and it builds Fabric8's elector with
 * {@code releaseOnCancel=false} (the Lease keeps naming a stopped replica until it expires, so the
 * standby waits the whole Lease duration). So JOSDK never exits here: {@link #lost} is called only
 * for a Lease lost while running (the caller exits to restart clean), and {@link #release()} gives
 * the Lease up with Fabric8's own {@code LeaderElector.release()} once the replica no longer probes
 * or writes.
 *
 * <p>The release is the one write to this Lease that Vigil makes itself, and it takes a {@link
 * WriteBudget.Priority#LEASE} token. JOSDK's elector renews the Lease with a Fabric8 {@code
 * LeaseLock} that JOSDK 5.3.2 builds inside its {@code LeaderElectionManager} from the name and
 * namespace alone, so those renewals are out of the budget's reach (one write per retry period, 750
 * ms, on the leader only).
 */
public final class LeaderLease {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderLease.class);

  private final KubernetesClient client;
  private final WriteBudget budget;
  private final String namespace;
  private final String name;
  private final String identity;
  private final Timing timing;
  private final AtomicBoolean stopping = new AtomicBoolean();

  /**
   * The Lease's timing. {@link #DEFAULTS}: JOSDK's Lease (15 s) and renew deadline (10 s), and a
   * retry period of 750 ms instead of its 2 s: a standby tries the Lease every 0.75 to 1.65 s
   * (Fabric8 adds up to 120 % jitter), so after a graceful stop releases it the standby leads
   * within 2 s; the leader renews every 750 ms.
   */
  public record Timing(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
    public static final Timing DEFAULTS =
        new Timing(
            LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE,
            LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
            Duration.ofMillis(750));
  }

  /**
   * @param identity null: JOSDK's choice (the HOSTNAME variable, the Pod's name, else a random
   *     UUID), made here so that {@link #release()} knows it
   */
  public LeaderLease(
      KubernetesClient client,
      WriteBudget budget,
      String namespace,
      String name,
      String identity,
      Timing timing) {
    this.client = client;
    this.budget = budget;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity != null ? identity : defaultIdentity(System.getenv("HOSTNAME"));
    this.timing = timing;
  }

  static String defaultIdentity(String hostname) {
    return hostname == null || hostname.isBlank() ? UUID.randomUUID().toString() : hostname;
  }

  public String identity() {
    return identity;
  }

  /**
   * JOSDK's configuration for this Lease. {@code lost} runs when the Lease is lost while the
   * replica runs, never after {@link #stopping()}.
   */
  public LeaderElectionConfiguration configuration(
      Leadership leadership, Runnable started, Runnable lost) {
    return LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(name)
        .withLeaseNamespace(namespace)
        .withIdentity(identity)
        .withLeaseDuration(timing.leaseDuration())
        .withRenewDeadline(timing.renewDeadline())
        .withRetryPeriod(timing.retryPeriod())
        .withLeaderCallbacks(
            new LeaderCallbacks(
                () -> {
                  leadership.startedLeading();
                  started.run();
                },
                () -> {
                  leadership.stoppedLeading();
                  if (stopping.get()) {
                    LOG.info("stopped leading: stopping");
                  } else {
                    lost.run();
                  }
                },
                who -> {
                  leadership.newLeader(who);
                  LOG.info("leader is {}", who);
                }))
        // JOSDK 5.3.2: build() never exits and withExitOnStopLeading throws; buildForTest(false)
        // states it (exiting is the caller's, in lost)
        .buildForTest(false);
  }

  /**
   * Waits, before this unsharded replica stands for its Lease, while a sharded Vigil runs in the
   * Lease's namespace (a live shard Lease): the sharded replicas elect their sharder on the same
   * Lease, and an unsharded replica that won it would reconcile every pool beside their owners. A
   * replica started by hand next to the chart's default install thus stands by for as long as that
   * install runs; during an upgrade from sharded to unsharded it leads once the old replicas have
   * stopped. A failed look (no permission to list Leases) does not hold it back.
   *
   * @return false when interrupted
   */
  public boolean awaitNoShardedInstall(LongSupplier clock, long pollMs) {
    boolean said = false;
    while (true) {
      List<String> live;
      try {
        live = ShardLease.liveShards(client, namespace, clock.getAsLong());
      } catch (KubernetesClientException e) {
        LOG.debug("could not list shard Leases in {}: {}", namespace, e.getMessage());
        return true;
      }
      if (live.isEmpty()) {
        if (said) {
          LOG.info("no live shard Lease left in {}: standing for the leader Lease", namespace);
        }
        return true;
      }
      if (!said) {
        LOG.info(
            "a sharded Vigil runs in {} (live shard Leases of {}): this unsharded replica stands by"
                + " until none is live",
            namespace,
            live);
        said = true;
      }
      try {
        Thread.sleep(pollMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  /** From now on a stop of the election is this replica stopping, not a lost Lease. */
  public void stopping() {
    stopping.set(true);
  }

  /**
   * Gives the Lease up if this replica holds it, as client-go's {@code release} does: holder
   * cleared (an empty string), duration 1 s, so a standby takes it at its next try instead of after
   * the Lease duration. An update with the read resourceVersion, so a Lease another replica took in
   * between is left alone. (Fabric8's {@code LeaderElector.release()} sends the holder as null in a
   * JSON merge patch, which leaves it in place: the standby then waits the 1 s out.) Call last,
   * once nothing probes or writes; a failure is logged and the Lease expires as before.
   */
  public boolean release() {
    stopping();
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null
          || lease.getSpec() == null
          || !identity.equals(lease.getSpec().getHolderIdentity())) {
        return false;
      }
      ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
      lease.getSpec().setHolderIdentity("");
      lease.getSpec().setLeaseDurationSeconds(1);
      lease.getSpec().setAcquireTime(now);
      lease.getSpec().setRenewTime(now);
      budget.leaseWrite();
      client
          .leases()
          .inNamespace(namespace)
          .resource(lease)
          .patch(PatchContext.of(PatchType.JSON_MERGE));
      LOG.info("released the leader Lease {}/{}", namespace, name);
      return true;
    } catch (KubernetesClientException e) {
      LOG.warn("could not release the leader Lease {}/{}: {}", namespace, name, e.getMessage());
      return false;
    }
  }
}
