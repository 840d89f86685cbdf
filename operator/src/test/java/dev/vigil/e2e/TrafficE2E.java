package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.e2e.TestHosts.Mode;
import dev.vigil.e2e.Traffic.Request;
import dev.vigil.e2e.Traffic.Via;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real traffic follows Vigil's verdict through two real consumers of its EndpointSlices (issue 20):
 * kube-proxy (built from {@code k8s.io/kubernetes}, nftables mode, a Node inside test host 1,
 * clients there hitting the Service's ClusterIP) and Traefik (its Kubernetes Ingress provider, an
 * Ingress routing a host to the pool's Service). Backends are {@code e2e/backend.py} on test hosts
 * 2 to 4, each naming itself in its answers; every assertion is on the requests ({@code
 * e2e/traffic.py}: a new connection per request, about 100 per second per consumer), never on the
 * slices alone. The policy is the fixture's: interval 500 ms, timeout 300 ms, fall 3, rise 2, panic
 * below 50 %.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class TrafficE2E {
  private static final int PORT = 8080;
  private static final int SERVICE_PORT = 80;
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static final long INTERVAL = 500;
  private static final long TIMEOUT = 300;
  private static final int FALL = 3;

  /**
   * After a slice change, how long the consumers get to act on it before a test judges the traffic:
   * kube-proxy syncs at most once a second (its default minSyncPeriod), Traefik applies a
   * provider's configuration at most every 2 s (its default providersThrottleDuration).
   */
  private static final long SETTLE = 3_000;

  /**
   * The bound on "death to the last request that reached the backend", per kill: the fall-th failed
   * probe comes at most fall intervals (+ a probe timeout for a hang) after the death, then the
   * slice write and the consumer's own delay (above), on a shared machine. Each kill window stays
   * open {@link #KILL_WINDOW} after the slice changed, so a consumer that ignored the slice would
   * keep failing until then and exceed this bound.
   */
  private static final long SHIFT_BOUND = FALL * INTERVAL + TIMEOUT + 3_000;

  private static final long KILL_WINDOW = 5_000;

  /**
   * Kills per failure mode; {@code -Dvigil.traffic.kills=20} for the figures in docs/traffic.md.
   */
  private static final int KILLS = Integer.getInteger("vigil.traffic.kills", 5);

  /** The consumers to send traffic through: both, unless {@code -Dvigil.traffic.via=KUBE_PROXY}. */
  private static final List<Via> VIAS =
      java.util.Arrays.stream(
              System.getProperty("vigil.traffic.via", "KUBE_PROXY,TRAEFIK").split(","))
          .map(String::trim)
          .map(Via::valueOf)
          .toList();

  private static E2eCluster cluster;
  private static Consumers consumers;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "traffic", PORT);
  private final String ns = bed.ns();
  private final TestHosts hosts = bed.hosts();
  private final PublishedSlices slices = bed.slices();
  private InProcessOperator operator;

  @BeforeAll
  static void consumers() {
    cluster = E2eCluster.withChart();
    consumers = Consumers.start(cluster, VIAS.contains(Via.TRAEFIK));
  }

  @AfterAll
  static void stopConsumers() {
    if (consumers != null) {
      consumers.close();
    }
  }

  @Test
  void steadyTrafficSpreadsOverTheAvailableBackendsAndNoneReachesADownOne() {
    running(Mode.FAILING);

    Map<Via, List<Request>> run = traffic(Duration.ofSeconds(5));
    for (Via via : VIAS) {
      List<Request> requests = run.get(via);
      assertThat(requests).as("%s requests", via).hasSizeGreaterThan(50);
      assertThat(requests).as("%s: %s", via, Traffic.byBackend(requests)).allMatch(Request::ok);
      assertThat(reached(requests)).as("%s backends", via).isEqualTo(PublishedSlices.ips(2, 3));
      for (int h : new int[] {2, 3}) {
        assertThat(Traffic.share(requests, from(h)))
            .as("%s share of %s: %s", via, TestHosts.address(h), Traffic.byBackend(requests))
            .isGreaterThan(0.3);
      }
    }
  }

  @Test
  void aKilledBackendStopsReceivingRequestsWithinFallIntervals() {
    measureShift(Mode.REFUSE);
  }

  @Test
  void aBackendAnswering503StopsReceivingRequestsWithinFallIntervals() {
    measureShift(Mode.FAILING);
  }

  @Test
  void aBackendEjectedByReportedOutcomesGetsNoNewRequestsWhileItsEjectionLasts() throws Exception {
    HealthPolicy policy = policy();
    policy.getSpec().getPassive().setBaseEjectionTime("12s");
    policy.getSpec().getPassive().setMaxEjectionTime("60s");
    policy.getSpec().getPassive().setMaxEjectionPercent(50);
    webPool(policy);
    OutcomeReporter reporter = OutcomeReporter.bind(cluster, ns, "reporter");
    startOperator(0);
    slices.awaitReady(CONVERGE, 2, 3, 4);
    awaitConverged(2, 3, 4);

    long started = System.currentTimeMillis();
    List<Traffic> runs = start(Duration.ofSeconds(40));
    try {
      for (Traffic t : runs) {
        awaitReached(t, 3, started); // the client is up and the backend in rotation
      }
      long reported = System.currentTimeMillis();
      assertThat(reporter.report(operator.outcomePort(), TestHosts.address(3), 8, PORT))
          .as("the intake's answer")
          .isEqualTo(200);
      slices.awaitReady(CONVERGE, 2, 4);
      long published = System.currentTimeMillis();
      long ejectionEnds = reported + 12_000;
      assertThat(ejectionEnds - 500 - (published + SETTLE))
          .as("a window to watch inside the ejection")
          .isGreaterThan(3_000);
      sleep(ejectionEnds - System.currentTimeMillis());
      slices.awaitReady(CONVERGE, 2, 3, 4);
      long back = System.currentTimeMillis();
      for (Traffic t : runs) {
        awaitReached(t, 3, back);
        List<Request> all = t.soFar();
        assertThat(Traffic.between(all, started, reported))
            .as("%s before the report", t.via())
            .anyMatch(from(3));
        List<Request> ejected = Traffic.between(all, published + SETTLE, ejectionEnds - 500);
        System.out.printf(
            "traffic: %s during the ejection of %s: %s%n",
            t.via(), TestHosts.address(3), Traffic.byBackend(ejected));
        assertThat(ejected).as("%s during the ejection", t.via()).hasSizeGreaterThan(50);
        assertThat(ejected).as("%s during the ejection", t.via()).noneMatch(from(3));
        assertThat(ejected).as("%s during the ejection", t.via()).allMatch(Request::ok);
        assertThat(reached(ejected)).isEqualTo(PublishedSlices.ips(2, 4));
      }
    } finally {
      runs.forEach(Traffic::close);
    }
  }

  @Test
  void panicSpreadsTrafficOverEveryBackendAgain() {
    running(Mode.HEALTHY);

    hosts.set(3, Mode.FAILING);
    hosts.set(4, Mode.FAILING);
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> Boolean.TRUE.equals(pool().getStatus().getPanic()));
    slices.awaitReady(CONVERGE, 2, 3, 4);
    sleep(SETTLE);

    Map<Via, List<Request>> run = traffic(Duration.ofSeconds(5));
    for (Via via : VIAS) {
      List<Request> requests = run.get(via);
      System.out.printf("traffic: %s in panic: %s%n", via, Traffic.byBackend(requests));
      assertThat(reached(requests)).as("%s backends", via).isEqualTo(PublishedSlices.ips(2, 3, 4));
      for (int h : new int[] {2, 3, 4}) {
        assertThat(Traffic.share(requests, from(h)))
            .as("%s share of %s: %s", via, TestHosts.address(h), Traffic.byBackend(requests))
            .isGreaterThan(0.2);
      }
      assertThat(requests).filteredOn(from(2)).allMatch(Request::ok);
      assertThat(requests).filteredOn(from(3).or(from(4))).allMatch(r -> "503".equals(r.outcome()));
    }
  }

  @Test
  void aRollingUpdateDrainsTerminatingBackendsAndKubeProxyFallsBackToThemWhenNoneIsReady() {
    running(Mode.HEALTHY);

    // A terminating Pod (no kubelet: it stays terminating for its grace period).
    terminate(2);
    awaitConditions(2, false, true, true);
    sleep(SETTLE);
    Map<Via, List<Request>> run = traffic(Duration.ofSeconds(4));
    for (Via via : VIAS) {
      List<Request> requests = run.get(via);
      System.out.printf("traffic: %s, web-2 terminating: %s%n", via, Traffic.byBackend(requests));
      assertThat(requests).as("%s", via).allMatch(Request::ok);
      assertThat(reached(requests))
          .as("%s: no new connections to the terminating backend", via)
          .isEqualTo(PublishedSlices.ips(3, 4));
    }

    // Every Pod terminating, one of them failing its probes: nothing is ready, two are serving.
    hosts.set(4, Mode.FAILING);
    terminate(3);
    terminate(4);
    awaitConditions(2, false, true, true);
    awaitConditions(3, false, true, true);
    awaitConditions(4, false, false, true);
    sleep(SETTLE);
    run = traffic(Duration.ofSeconds(4));
    List<Request> kubeProxy = run.get(Via.KUBE_PROXY);
    System.out.printf("traffic: kube-proxy, all terminating: %s%n", Traffic.byBackend(kubeProxy));
    assertThat(kubeProxy).as("kube-proxy: serving-and-terminating fallback").allMatch(Request::ok);
    assertThat(reached(kubeProxy)).isEqualTo(PublishedSlices.ips(2, 3));
    if (!VIAS.contains(Via.TRAEFIK)) {
      return;
    }
    List<Request> traefik = run.get(Via.TRAEFIK);
    System.out.printf("traffic: Traefik, all terminating: %s%n", Traffic.byBackend(traefik));
    // Traefik fences terminating servers and has no fallback: it answers 503 itself.
    assertThat(traefik).as("Traefik: every server fenced").isNotEmpty();
    assertThat(traefik).allMatch(r -> !r.reachedBackend() && "503".equals(r.outcome()));
  }

  @Test
  void withVigilStoppedTrafficKeepsFlowingOnTheLastPublishedVerdict() {
    running(Mode.FAILING);

    operator.close();
    operator = null;
    // Healthy again, but nobody publishes it: the verdict stays as it was.
    hosts.set(4, Mode.HEALTHY);
    sleep(FALL * INTERVAL + SETTLE);
    Map<Via, List<Request>> run = traffic(Duration.ofSeconds(5));
    for (Via via : VIAS) {
      List<Request> requests = run.get(via);
      assertThat(requests).as("%s: %s", via, Traffic.byBackend(requests)).allMatch(Request::ok);
      assertThat(reached(requests)).as("%s", via).isEqualTo(PublishedSlices.ips(2, 3));
    }
    // A backend that dies meanwhile keeps its share until an operator publishes again.
    hosts.set(3, Mode.REFUSE);
    sleep(FALL * INTERVAL + SETTLE);
    run = traffic(Duration.ofSeconds(3));
    for (Via via : VIAS) {
      List<Request> requests = run.get(via);
      System.out.printf(
          "traffic: %s, Vigil stopped, h3 dead: %s%n", via, Traffic.byBackend(requests));
      assertThat(Traffic.share(requests, r -> !r.reachedBackend()))
          .as("%s: requests still sent to the dead backend", via)
          .isGreaterThan(0.2);
    }

    startOperator(-1);
    slices.awaitReady(CONVERGE, 2, 4);
    awaitConverged(2, 4);
  }

  // ---- the kill measurement ------------------------------------------------------------------

  /**
   * {@link #KILLS} times: backend 2 fails ({@code REFUSE}: its process is killed; {@code FAILING}:
   * it answers 503), then comes back. Per consumer and kill, the time from the failure to the start
   * of the last request that reached the failed backend (refused or answered by nobody; or its
   * 503). Printed with p50/p99 for docs/traffic.md.
   */
  private void measureShift(Mode failure) {
    running(Mode.HEALTHY);
    String victim = TestHosts.address(2);
    Predicate<Request> failed =
        failure == Mode.REFUSE
            ? r -> !r.reachedBackend()
            : r -> victim.equals(r.backend()) && "503".equals(r.outcome());

    List<long[]> windows = new ArrayList<>(); // {before, death, restore}
    Duration bound = Duration.ofSeconds(KILLS * 30L + 30);
    Map<Via, List<Long>> shifts = new EnumMap<>(Via.class);
    long started = System.currentTimeMillis();
    List<Traffic> runs = start(bound);
    try {
      for (Traffic t : runs) {
        awaitReached(t, 2, started); // the client is up (a slow start would miss the failure)
      }
      for (int i = 0; i < KILLS; i++) {
        long before = System.currentTimeMillis();
        hosts.set(2, failure);
        long death = System.currentTimeMillis();
        slices.awaitReady(CONVERGE, 3, 4);
        sleep(KILL_WINDOW);
        long restore = System.currentTimeMillis();
        hosts.set(2, Mode.HEALTHY);
        slices.awaitReady(CONVERGE, 2, 3, 4);
        for (Traffic t : runs) {
          awaitReached(t, 2, restore);
        }
        windows.add(new long[] {before, death, restore});
      }
      for (Traffic t : runs) {
        List<Request> all = t.soFar();
        List<Long> ms = new ArrayList<>();
        for (long[] w : windows) {
          List<Request> window = Traffic.between(all, w[0], w[2]);
          Optional<Request> last = window.stream().filter(failed).reduce((a, b) -> b);
          assertThat(last)
              .as(
                  "%s: a request reached the failed backend after the failure (%d ms) in"
                      + " [%d, %d): %s; the run: %s",
                  t.via(), w[1], w[0], w[2], Traffic.byBackend(window), Traffic.timeline(all))
              .isPresent();
          ms.add(Math.max(0, last.get().startMs() - w[1]));
          assertThat(window.stream().filter(failed.negate()))
              .as("%s: the other backends answered", t.via())
              .allMatch(Request::ok);
        }
        shifts.put(t.via(), ms);
      }
    } finally {
      runs.forEach(Traffic::close);
    }
    for (Map.Entry<Via, List<Long>> e : shifts.entrySet()) {
      List<Long> ms = e.getValue();
      System.out.printf(
          "traffic: %s %s: failure -> last request to it, ms: %s; p50 %d, p99 %d, max %d"
              + " (fall %d x interval %d ms = %d ms)%n",
          failure == Mode.REFUSE ? "killed" : "503",
          e.getKey(),
          ms,
          Traffic.percentile(ms, 50),
          Traffic.percentile(ms, 99),
          ms.stream().mapToLong(Long::longValue).max().orElseThrow(),
          FALL,
          INTERVAL,
          FALL * INTERVAL);
      assertThat(ms).as("%s, bound %d ms", e.getKey(), SHIFT_BOUND).allMatch(m -> m <= SHIFT_BOUND);
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static HealthPolicy policy() {
    return Fixtures.policy(null, "fast", INTERVAL + "ms", TIMEOUT + "ms");
  }

  /** The policy, Pods web-2..web-4 on test hosts 2..4 (backends healthy), the pool, the Ingress. */
  private void webPool(HealthPolicy policy) {
    KubernetesClient admin = cluster.admin();
    policy.getMetadata().setNamespace(ns);
    admin.resource(policy).create();
    for (int h = 2; h <= 4; h++) {
      hosts.start(h);
      cluster.createRunningPod(ns, "web-" + h, "web", TestHosts.address(h));
    }
    admin.resource(Fixtures.pool(ns, "web", "fast", "web", PORT)).create();
    Consumers.routeToWeb(cluster, ns, hostName(), SERVICE_PORT);
  }

  /**
   * The pool with backend 4 in {@code four} (HEALTHY or FAILING), the operator, and traffic through
   * every consumer answered by exactly the Up backends.
   */
  private void running(Mode four) {
    webPool(policy());
    hosts.set(4, four);
    startOperator(-1);
    int[] up = four == Mode.HEALTHY ? new int[] {2, 3, 4} : new int[] {2, 3};
    slices.awaitReady(CONVERGE, up);
    awaitConverged(up);
  }

  private void startOperator(int outcomePort) {
    operator = bed.started(InProcessOperator.start(cluster, ns, null, outcomePort));
  }

  private String hostName() {
    return "web." + ns + ".test";
  }

  private String clusterIp() {
    String ip =
        await()
            .atMost(CONVERGE)
            .until(
                () -> {
                  var s = cluster.admin().services().inNamespace(ns).withName("web").get();
                  return s == null ? null : s.getSpec().getClusterIP();
                },
                v -> v != null && !v.isBlank());
    return ip;
  }

  private Traffic viaKubeProxy(Duration duration) {
    return Traffic.viaKubeProxy(
        cluster, Consumers.KUBE_PROXY_HOST, clusterIp(), SERVICE_PORT, duration);
  }

  private Traffic viaTraefik(Duration duration) {
    return Traffic.viaTraefik(cluster, consumers.traefikUrl(), hostName(), duration);
  }

  /** A run of {@code duration} through both consumers at once. */
  private Map<Via, List<Request>> traffic(Duration duration) {
    List<Traffic> runs = start(duration);
    try {
      Map<Via, List<Request>> out = new EnumMap<>(Via.class);
      runs.forEach(t -> out.put(t.via(), t.await()));
      return out;
    } finally {
      runs.forEach(Traffic::close);
    }
  }

  /** A run of {@code duration} through each consumer, started now. */
  private List<Traffic> start(Duration duration) {
    List<Traffic> runs = new ArrayList<>();
    for (Via via : VIAS) {
      runs.add(via == Via.KUBE_PROXY ? viaKubeProxy(duration) : viaTraefik(duration));
    }
    return runs;
  }

  /** Until a short run through both consumers is answered, all 200, by exactly these backends. */
  private void awaitConverged(int... hostIndexes) {
    Set<String> want = PublishedSlices.ips(hostIndexes);
    await()
        .atMost(CONVERGE)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              for (Map.Entry<Via, List<Request>> e : traffic(Duration.ofMillis(1_500)).entrySet()) {
                assertThat(e.getValue()).as("%s", e.getKey()).allMatch(Request::ok);
                assertThat(reached(e.getValue())).as("%s", e.getKey()).isEqualTo(want);
              }
            });
  }

  /**
   * Until {@code t} logs a request started after {@code sinceMs} that backend {@code h} answered.
   */
  private static void awaitReached(Traffic t, int h, long sinceMs) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                t.soFar().stream()
                    .anyMatch(r -> r.startMs() >= sinceMs && r.ok() && from(h).test(r)));
  }

  /** Deletes Pod web-h with a long grace period: without a kubelet it stays terminating. */
  private void terminate(int h) {
    cluster.admin().pods().inNamespace(ns).withName("web-" + h).withGracePeriod(600).delete();
  }

  /** Until the slices list host {@code h} with these conditions, all three explicit. */
  private void awaitConditions(int h, boolean ready, boolean serving, boolean terminating) {
    String ip = TestHosts.address(h);
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              List<EndpointConditions> found = new ArrayList<>();
              slices
                  .list()
                  .forEach(
                      s -> {
                        for (Endpoint e : s.getEndpoints()) {
                          if (e.getAddresses().contains(ip)) {
                            found.add(e.getConditions());
                          }
                        }
                      });
              assertThat(found)
                  .as("conditions of %s", ip)
                  .singleElement()
                  .satisfies(
                      c -> {
                        assertThat(c.getReady()).as("ready").isEqualTo(ready);
                        assertThat(c.getServing()).as("serving").isEqualTo(serving);
                        assertThat(c.getTerminating()).as("terminating").isEqualTo(terminating);
                      });
            });
  }

  private BackendPool pool() {
    return cluster.admin().resources(BackendPool.class).inNamespace(ns).withName("web").get();
  }

  private static Predicate<Request> from(int h) {
    String ip = TestHosts.address(h);
    return r -> ip.equals(r.backend());
  }

  private static Set<String> reached(List<Request> requests) {
    return requests.stream()
        .filter(Request::reachedBackend)
        .map(Request::backend)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static void sleep(long ms) {
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
