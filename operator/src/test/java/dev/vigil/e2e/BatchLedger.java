package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The count a {@link RoundRobinReporter}'s E2E ends with, at the API server: each accepted batch
 * ejects its backend exactly once, so a backend's {@code status.backends[].ejections} must equal
 * the batches accepted for it (a lost batch leaves it one short, a batch applied twice one over).
 */
final class BatchLedger {
  private BatchLedger() {}

  /**
   * Pools {@code o0 .. o<n-1>} in {@code ns} for a {@link RoundRobinReporter}: three backends each
   * (test hosts 1 to 3 on {@code port}), a policy that makes every batch of its pattern eject its
   * backend exactly once (threshold {@code threshold}; ejections of 100 ms x multiplier, far
   * shorter than a round between two batches for one backend; no cap; a sweep, which would decay
   * multipliers, once an hour), and a service account allowed to report. Returns its token.
   */
  static String outcomePools(E2eCluster cluster, String ns, int n, int threshold, int port) {
    KubernetesClient admin = cluster.admin();
    HealthPolicy policy = Fixtures.policy(ns, "outcomes", "2s", "1s");
    var passive = policy.getSpec().getPassive();
    passive.setConsecutiveErrors(threshold);
    passive.setBaseEjectionTime("100ms");
    passive.setMaxEjectionTime("1h");
    passive.setMaxEjectionPercent(100);
    passive.setSweepInterval("1h");
    admin.resource(policy).create();
    for (int i = 0; i < n; i++) {
      for (int h = 1; h <= 3; h++) {
        cluster.createRunningPod(ns, "o" + i + "-" + h, "o" + i, TestHosts.address(h));
      }
      admin.resource(Fixtures.headlessService(ns, "o" + i, port)).create();
      admin.resource(Fixtures.pool(ns, "o" + i, "outcomes", "o" + i, port)).create();
    }
    OutcomeReporter.bind(cluster, ns, "reporter");
    return cluster.token(ns, "reporter", OutcomeReporter.AUDIENCE);
  }

  /** status.backends[].ejections by pool and backend address ({@link RoundRobinReporter#key}). */
  static Map<String, Integer> ejections(List<BackendPool> pools) {
    Map<String, Integer> out = new TreeMap<>();
    for (BackendPool p : pools) {
      if (p.getStatus() == null || p.getStatus().getBackends() == null) {
        continue;
      }
      for (BackendStatus b : p.getStatus().getBackends()) {
        out.put(
            RoundRobinReporter.key(p.getMetadata().getName(), b.getAddress()),
            b.getEjections() == null ? 0 : b.getEjections());
      }
    }
    return out;
  }

  /**
   * Waits up to 30 s for the ejections in status to equal the batches {@code reporter} had
   * accepted, prints the totals after {@code label}, and asserts they are equal per backend.
   */
  static void assertExactlyOnce(
      String label, RoundRobinReporter reporter, Supplier<List<BackendPool>> pools) {
    Map<String, Integer> want = reporter.acceptedByBackend();
    Map<String, Integer> got = new TreeMap<>();
    try {
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> {
                got.clear();
                got.putAll(ejections(pools.get()));
                return got.equals(want);
              });
    } catch (ConditionTimeoutException e) {
      // the assertion below names the difference
    }
    System.out.println(
        label
            + ": ejections in status "
            + got.values().stream().mapToInt(Integer::intValue).sum()
            + " (want "
            + want.values().stream().mapToInt(Integer::intValue).sum()
            + ")");
    assertThat(got).isEqualTo(want);
  }
}
