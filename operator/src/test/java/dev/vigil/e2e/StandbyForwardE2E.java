package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.ops.LeaderAddress;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 33's routing with the chart unsharded (leader election, two replicas), on the real control
 * plane (docs/passive.md, "Routing between replicas"): two operator processes with the chart's args
 * and {@code sharding.enabled=false}, a {@link RoundRobinReporter} sending to both in turn as a
 * Service would, each batch under its own {@code Idempotency-Key}, every fourth accepted batch sent
 * again as after a lost answer.
 *
 * <ol>
 *   <li>While both run: every batch is accepted at the first request, the standby's too (it
 *       forwards to the leader named on the leader Lease; before, it answered 503 {@code
 *       not_leader}).
 *   <li>{@code kill -9} of the leader (its status caught up, the reporter held between two
 *       batches): the standby answers 503 {@code not_delivered} while the dead leader's Lease is
 *       live, then leads and accepts again. The test prints when.
 * </ol>
 *
 * At the end, counted at the API server: every backend's ejections in status equal the batches
 * accepted for it ({@link BatchLedger}): none lost, none applied twice.
 */
class StandbyForwardE2E {
  private static final int PORT = 8080;
  private static final int POOLS = 4;
  private static final int THRESHOLD = 3;
  private static final int RESEND_EVERY = 4;
  private static final Duration PACE = Duration.ofMillis(150);
  private static final Duration READY = Duration.ofSeconds(120);
  private static final Duration SERVICE_LAG = Duration.ofSeconds(10);

  /** The chart's leader Lease: 15 s; a new leader within it, its retry period and slack. */
  private static final Duration BACK_BOUND = Duration.ofSeconds(45);

  private E2eCluster cluster;
  private String ns;
  private String lease;
  private String token;
  private TestHosts hosts;
  private RoundRobinReporter reporter;
  private final List<ProcessOperator> started = new ArrayList<>();
  private final List<ProcessOperator> running = new ArrayList<>();

  /** Ports of killed replicas the reporter still sends to (a Service's lag), until when (nanos). */
  private final Map<Integer, Long> lingering = new ConcurrentHashMap<>();

  @BeforeEach
  void setUp() {
    cluster = E2eCluster.withChart();
    ns = cluster.freshNamespace("standby");
    lease = "vigil-" + ns;
    hosts = new TestHosts(cluster, PORT);
    token = ProcessOperator.serviceAccountToken(cluster);
  }

  @AfterEach
  void tearDown() {
    try {
      if (reporter != null) {
        reporter.stop();
      }
      if (hosts != null) {
        hosts.close();
      }
    } finally {
      ProcessOperator.closeAll(started, ns);
    }
  }

  private ProcessOperator start(String name) {
    ProcessOperator o = ProcessOperator.startUnsharded(cluster, name, ns, token);
    started.add(o);
    running.add(o);
    return o;
  }

  /** The ports the reporter sends to: the running replicas', and killed ones' within the lag. */
  private synchronized List<Integer> ports() {
    long now = System.nanoTime();
    lingering.values().removeIf(until -> until < now);
    List<Integer> ports = new ArrayList<>();
    running.forEach(o -> ports.add(o.outcomePort()));
    ports.addAll(lingering.keySet());
    return ports;
  }

  private List<BackendPool> pools() {
    return cluster.admin().resources(BackendPool.class).inNamespace(ns).list().getItems();
  }

  private Lease leaderLease() {
    return cluster.admin().leases().inNamespace(E2eCluster.RELEASE_NAMESPACE).withName(lease).get();
  }

  /** Whether the leader Lease names {@code holder} and carries its outcome address. */
  private boolean advertised(String holder) {
    Lease l = leaderLease();
    if (l == null || !holder.equals(l.getSpec().getHolderIdentity())) {
      return false;
    }
    Map<String, String> a = l.getMetadata().getAnnotations();
    return a != null
        && holder.equals(a.get(LeaderAddress.HOLDER))
        && a.get(LeaderAddress.ADDRESS) != null;
  }

  @Test
  void theStandbyForwardsAtTheFirstRequestAndLeadsAfterTheLeadersKill() throws Exception {
    for (int h = 1; h <= 3; h++) {
      hosts.start(h);
    }
    ProcessOperator a = start("a");
    System.out.println("standby-forward: " + a.name() + " Ready " + a.awaitReady(READY) + " ms");
    await().atMost(Duration.ofSeconds(30)).until(() -> advertised(a.name()));
    ProcessOperator b = start("b");
    System.out.println("standby-forward: " + b.name() + " Ready " + b.awaitReady(READY) + " ms");
    assertThat(cluster.leaseHolder(lease))
        .as("the Lease stays with the first replica")
        .isEqualTo(a.name());
    String reporterToken = BatchLedger.outcomePools(cluster, ns, POOLS, THRESHOLD, PORT);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () ->
                pools().stream()
                    .allMatch(
                        p ->
                            p.getStatus() != null
                                && p.getStatus().getBackends() != null
                                && p.getStatus().getBackends().size() == 3));

    List<String> names = new ArrayList<>();
    for (int i = 0; i < POOLS; i++) {
      names.add("o" + i);
    }
    reporter =
        new RoundRobinReporter(
            ns,
            names,
            List.of(TestHosts.address(1), TestHosts.address(2), TestHosts.address(3)),
            PORT,
            1_000,
            THRESHOLD,
            PACE,
            () -> reporterToken,
            this::ports,
            RESEND_EVERY);
    Thread sending = new Thread(reporter, "round-robin-reporter");
    sending.setDaemon(true);
    sending.start();

    // 1. both running: every batch at its first request, the standby's forwarded to the leader
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                reporter.batchesAccepted() >= POOLS * 3 * 2
                    || reporter.refused503() > 0
                    || !reporter.unexpected().isEmpty());
    reporter.hold();
    await()
        .atMost(Duration.ofSeconds(70))
        .pollInterval(Duration.ofMillis(20))
        .until(reporter::held);
    int before = reporter.batchesAccepted();
    int sentBefore = reporter.sent();
    int resentBefore = reporter.resent();
    Map<Integer, Integer> byPort = reporter.acceptedByPort();
    System.out.printf(
        "standby-forward: both running: %d batches accepted in %d requests (%d of them resends"
            + " answered from memory), %d answered 503; per replica port %s (leader %s :%d,"
            + " standby %s :%d)%n",
        before,
        sentBefore,
        resentBefore,
        reporter.refused503(),
        byPort,
        a.name(),
        a.outcomePort(),
        b.name(),
        b.outcomePort());
    assertThat(reporter.unexpected()).as("answers other than 200 and 503").isEmpty();
    assertThat(reporter.refused503()).as("503 answers while both replicas ran").isZero();
    assertThat(sentBefore)
        .as("requests: one per batch and resend")
        .isEqualTo(before + resentBefore);
    assertThat(byPort.getOrDefault(b.outcomePort(), 0))
        .as("batches the standby accepted (forwarded to the leader)")
        .isPositive();

    // 2. kill -9 of the leader, its status caught up with every batch it accepted
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> BatchLedger.ejections(pools()).equals(reporter.acceptedByBackend()));
    synchronized (this) {
      running.remove(a);
      lingering.put(a.outcomePort(), System.nanoTime() + SERVICE_LAG.toNanos());
    }
    int refusedBefore = reporter.refused503();
    long kill = System.nanoTime();
    assertThat(a.kill()).as("exit value of a process killed by SIGKILL (128 + 9)").isEqualTo(137);
    reporter.release();
    long[] leads = {-1};
    await()
        .atMost(BACK_BOUND)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              if (leads[0] < 0 && b.name().equals(cluster.leaseHolder(lease))) {
                leads[0] = System.nanoTime() - kill;
              }
              return reporter.batchesAccepted() > before;
            });
    long back = System.nanoTime() - kill;
    int refusedInGap = reporter.refused503() - refusedBefore;
    awaitBatches(reporter.batchesAccepted() + POOLS * 3);
    reporter.wrapUp();
    sending.join(Duration.ofSeconds(70).toMillis());
    assertThat(sending.isAlive()).as("the reporter finished its last batch").isFalse();
    System.out.printf(
        "standby-forward: kill -9 of the leader %s: the standby held the Lease after %d ms, the"
            + " first batch was accepted again after %d ms; %d answered 503 in between%n",
        a.name(), leads[0] / 1_000_000, back / 1_000_000, refusedInGap);
    System.out.println(
        "standby-forward outcomes: "
            + reporter.batchesAccepted()
            + " batches accepted in "
            + reporter.sent()
            + " requests ("
            + reporter.resent()
            + " resent under their key; "
            + reporter.refused503()
            + " answered 503; "
            + reporter.connectionRefused()
            + " connections refused or timed out; "
            + reporter.ambiguous().size()
            + " sent without an answer "
            + reporter.ambiguous()
            + "); per replica port "
            + reporter.acceptedByPort());
    assertThat(reporter.unexpected()).as("answers other than 200 and 503").isEmpty();
    assertThat(cluster.leaseHolder(lease)).isEqualTo(b.name());
    BatchLedger.assertExactlyOnce("standby-forward outcomes", reporter, this::pools);
  }

  /** Waits until the reporter has {@code n} batches accepted. */
  private void awaitBatches(int n) {
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> reporter.batchesAccepted() >= n || !reporter.unexpected().isEmpty());
    assertThat(reporter.unexpected()).as("answers other than 200 and 503").isEmpty();
  }
}
