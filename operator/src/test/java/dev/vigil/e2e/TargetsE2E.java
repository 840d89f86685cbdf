package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.e2e.TestHosts.Mode;
import dev.vigil.e2e.Traffic.Request;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 35 item 1 on the real control plane: backends that are not Pods. A "VM" (test host 2, a
 * network namespace with no Pod object anywhere) as a static {@code address} target, and a {@code
 * hostname} target served by a real DNS server (dnsmasq) that answers test host 3, later test host
 * 4. The operator runs as the chart's ServiceAccount ({@code --dns-server} pointing at dnsmasq);
 * kube-proxy (a Node in test host 1) routes a client's requests to the selector-less Service's
 * ClusterIP by the slices Vigil writes. Killed, recovered, moved in DNS, the DNS server silent:
 * each published change is timed and printed ({@code targets: ...}), and the traffic follows.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class TargetsE2E {
  private static final int PORT = 8080;
  private static final int SERVICE_PORT = 80;
  private static final String NAME = "db.vigil.test";
  private static final Duration CONVERGE = Duration.ofSeconds(60);

  /** kube-proxy applies a slice change within about a second (its minSyncPeriod); margin. */
  private static final long SETTLE = 3_000;

  private static E2eCluster cluster;
  private static Consumers consumers;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "targets", PORT);
  @AutoClose private final Dnsmasq dns = Dnsmasq.start();
  private final String ns = bed.ns();
  private final TestHosts hosts = bed.hosts();
  private final PublishedSlices slices = bed.slices();

  @BeforeAll
  static void consumers() {
    cluster = E2eCluster.withChart();
    consumers = Consumers.start(cluster, false);
  }

  @AfterAll
  static void stopConsumers() {
    if (consumers != null) {
      consumers.close();
    }
  }

  @Test
  void aVmAndADnsTargetAreCheckedPublishedAndFollowedByKubeProxy() {
    for (int h = 2; h <= 4; h++) {
      hosts.start(h);
    }
    dns.answer(NAME, TestHosts.address(3));
    KubernetesClient admin = cluster.admin();
    HealthPolicy policy = Fixtures.policy(ns, "fast", "500ms", "300ms");
    admin.resource(policy).create();
    admin.resource(pool()).create();
    bed.started(InProcessOperator.startWith(cluster, ns, "--dns-server=" + dns.server()));

    timed("first publish of both targets", () -> ready(2, 3));
    assertThat(admin.pods().inNamespace(ns).list().getItems()).as("no Pod anywhere").isEmpty();
    assertThat(slices.list().get(0).getEndpoints()).allMatch(e -> e.getTargetRef() == null);
    assertThat(reached(trafficFor(Duration.ofSeconds(3)))).isEqualTo(PublishedSlices.ips(2, 3));

    hosts.set(2, Mode.REFUSE);
    timed("VM killed -> ready=false", () -> ready(3));
    sleep(SETTLE);
    List<Request> killed = trafficFor(Duration.ofSeconds(3));
    assertThat(reached(killed))
        .as("kube-proxy after the VM died")
        .isEqualTo(PublishedSlices.ips(3));
    assertThat(killed).allMatch(Request::ok);

    hosts.set(2, Mode.HEALTHY);
    timed("VM recovered -> ready", () -> ready(2, 3));

    hosts.set(3, Mode.REFUSE);
    timed("DNS target killed -> ready=false", () -> ready(2));
    hosts.set(3, Mode.HEALTHY);
    timed("DNS target recovered -> ready", () -> ready(2, 3));

    dns.answer(NAME, TestHosts.address(4));
    timed(
        "DNS answer moved to host 4 -> slice follows",
        () -> ready(2, 4) && !listed().contains(TestHosts.address(3)));
    sleep(SETTLE);
    assertThat(reached(trafficFor(Duration.ofSeconds(3))))
        .as("kube-proxy after the move")
        .isEqualTo(PublishedSlices.ips(2, 4));

    dns.pause();
    timed(
        "DNS server silent -> TargetsResolved=False, last answer kept",
        () -> {
          Condition c = condition();
          return c != null && "False".equals(c.getStatus());
        });
    assertThat(condition().getReason()).isEqualTo("NotResolving");
    assertThat(condition().getMessage()).contains(NAME, "timeout", "kept until");
    assertThat(slices.readyIps()).isEqualTo(PublishedSlices.ips(2, 4));
    dns.resume();
    timed(
        "DNS server back -> TargetsResolved=True",
        () -> {
          Condition c = condition();
          return c != null && "True".equals(c.getStatus());
        });
  }

  private BackendPool pool() {
    return Serialization.unmarshal(
        """
        apiVersion: vigil.dev/v1alpha1
        kind: BackendPool
        metadata: {name: web, namespace: %s}
        spec:
          policyRef: {name: fast}
          targets:
          - {address: %s}
          - {hostname: %s}
          ports:
          - {name: http, port: %d, targetPort: %d, protocol: TCP}
        """
            .formatted(ns, TestHosts.address(2), NAME, SERVICE_PORT, PORT),
        BackendPool.class);
  }

  /** Waits for {@code done}, prints how long it took from now. */
  private static void timed(String what, Supplier<Boolean> done) {
    long start = System.currentTimeMillis();
    await().atMost(CONVERGE).pollInterval(Duration.ofMillis(100)).until(done::get);
    System.out.printf("targets: %s: %d ms%n", what, System.currentTimeMillis() - start);
  }

  private boolean ready(int... hostIndexes) {
    return slices.readyIps().equals(PublishedSlices.ips(hostIndexes));
  }

  private Set<String> listed() {
    Set<String> out = new TreeSet<>();
    slices.list().forEach(s -> s.getEndpoints().forEach(e -> out.addAll(e.getAddresses())));
    return out;
  }

  private Condition condition() {
    BackendPool p =
        cluster.admin().resources(BackendPool.class).inNamespace(ns).withName("web").get();
    if (p == null || p.getStatus() == null || p.getStatus().getConditions() == null) {
      return null;
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> "TargetsResolved".equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private List<Request> trafficFor(Duration duration) {
    String clusterIp =
        await()
            .atMost(CONVERGE)
            .until(
                () -> {
                  var s = cluster.admin().services().inNamespace(ns).withName("web").get();
                  return s == null ? null : s.getSpec().getClusterIP();
                },
                v -> v != null && !v.isBlank());
    try (Traffic t =
        Traffic.viaKubeProxy(
            cluster, Consumers.KUBE_PROXY_HOST, clusterIp, SERVICE_PORT, duration)) {
      return t.await();
    }
  }

  private static Set<String> reached(List<Request> requests) {
    return requests.stream()
        .filter(Request::reachedBackend)
        .map(Request::backend)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
