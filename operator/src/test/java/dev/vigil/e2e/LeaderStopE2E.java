package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A SIGTERM of the leading replica of an unsharded install (issue 36, break 1), on the real control
 * plane: two operator processes as the chart's Deployment runs them with {@code
 * sharding.enabled=false}. JOSDK 5.3.2's stop-leading path used to call {@code System.exit} from
 * inside the shutdown hook, so the leader logged "Exiting." and never exited, and its Lease named
 * it until it expired. Measured at the process (its exit) and at the API server (the Lease as the
 * test reads it every 20 ms):
 *
 * <ul>
 *   <li>the leader exits within 5 s of the SIGTERM, with 143 (a clean stop on SIGTERM);
 *   <li>it releases the Lease (holder cleared) before it exits;
 *   <li>the standby holds the Lease within 2 s of the release.
 * </ul>
 */
class LeaderStopE2E {
  private static final Duration EXIT_BOUND = Duration.ofSeconds(5);
  private static final Duration TAKEOVER_BOUND = Duration.ofSeconds(2);

  private E2eCluster cluster;
  private String ns;
  private String lease;
  private String token;
  private final List<ProcessOperator> started = new ArrayList<>();

  @BeforeEach
  void setUp() {
    cluster = E2eCluster.withChart();
    ns = cluster.freshNamespace("stop");
    lease = "vigil-" + ns;
    token = ProcessOperator.serviceAccountToken(cluster);
  }

  @AfterEach
  void tearDown() {
    for (ProcessOperator o : started) {
      try {
        o.close();
      } finally {
        o.keepLogAndDeleteFiles(Path.of("target", "e2e-logs", "LeaderStopE2E"));
      }
    }
  }

  private ProcessOperator start(String name) {
    ProcessOperator o = ProcessOperator.startUnsharded(cluster, name, ns, token);
    started.add(o);
    return o;
  }

  private String holder() {
    return cluster.leaseHolder(lease);
  }

  @Test
  void aSigtermedLeaderExitsReleasesTheLeaseAndTheStandbyLeadsAtOnce() throws Exception {
    ProcessOperator a = start("replica-a");
    a.awaitReady(Duration.ofSeconds(90));
    await().atMost(Duration.ofSeconds(30)).until(() -> a.name().equals(holder()));
    ProcessOperator b = start("replica-b");
    b.awaitReady(Duration.ofSeconds(90));
    assertThat(holder()).as("the Lease stays with the first replica").isEqualTo(a.name());

    // Watches the Lease from the API server while the leader stops.
    long[] releasedAt = {-1};
    long[] takenAt = {-1};
    Thread watch =
        new Thread(
            () -> {
              long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
              while (System.nanoTime() < end && takenAt[0] < 0) {
                String h = holder();
                long now = System.nanoTime();
                if (releasedAt[0] < 0 && (h == null || h.isEmpty())) {
                  releasedAt[0] = now;
                }
                if (b.name().equals(h)) {
                  // released and taken within one read: the release is no later than this read
                  releasedAt[0] = releasedAt[0] < 0 ? now : releasedAt[0];
                  takenAt[0] = now;
                }
                try {
                  Thread.sleep(20);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "lease-watch");
    watch.start();

    long term = System.nanoTime();
    int exit = a.terminate();
    long exitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - term);
    watch.join(TimeUnit.SECONDS.toMillis(35));
    System.out.printf(
        "leader stop: exit %d after %d ms; Lease released %d ms after SIGTERM, taken by the"
            + " standby %d ms after the release%n",
        exit,
        exitMs,
        releasedAt[0] < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(releasedAt[0] - term),
        releasedAt[0] < 0 || takenAt[0] < 0
            ? -1
            : TimeUnit.NANOSECONDS.toMillis(takenAt[0] - releasedAt[0]));

    assertThat(exitMs)
        .as("ms from SIGTERM to the leader's exit (log:%n%s)", a.log())
        .isLessThanOrEqualTo(EXIT_BOUND.toMillis());
    assertThat(exit).as("exit value after a clean stop on SIGTERM").isEqualTo(143);
    assertThat(a.log()).contains("released the leader Lease");
    assertThat(takenAt[0]).as("the standby seen holding the Lease").isPositive();
    assertThat(TimeUnit.NANOSECONDS.toMillis(takenAt[0] - releasedAt[0]))
        .as("ms from the release to the standby's leadership")
        .isLessThanOrEqualTo(TAKEOVER_BOUND.toMillis());
  }
}
