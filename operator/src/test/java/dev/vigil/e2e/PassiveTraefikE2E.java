package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.e2e.Traffic.Request;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.TestTls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33's first proof on the real control plane: real Traefik (the e2e build, v3.7.13, started
 * by {@code e2e/consumers.sh} with its Kubernetes Ingress provider) routes an Ingress to pool
 * {@code web} of three backends ({@code e2e/backend.py} on test hosts 2 to 4) and exports its
 * access log to the operator's outcome port over OTLP/gRPC ({@code -Dvigil.traefik.otlp=http}:
 * OTLP/HTTP; TLS, the port's CA; a token of its ServiceAccount {@code kube-system/traefik} for the
 * audience {@code vigil.dev}, bound in the pool's namespace to {@code vigil-outcome-reporter}).
 * Nothing else reports outcomes.
 *
 * <p>{@value #KILLS} times, one backend (hosts 2, 3, 4, 2, 3) answers 503 to every real request
 * while its active check ({@code GET /healthz}) keeps passing (backend.py's mode {@code errors}):
 * it must be ejected through Traefik's own log. Per kill, the time from its first failing request
 * (the backend's own log, the boundary) to {@code ready=false} for its endpoint (a watch of the
 * slices, {@link ReadyTimeline}); then it answers again and the test waits for its ejection to end.
 * The other backends stay ready throughout. Without the OTLP path (Traefik not pointed at Vigil) no
 * backend is ever ejected and the test fails at the first kill.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PassiveTraefikE2E {
  private static final int PORT = 8080;
  private static final int SERVICE_PORT = 80;
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static final int KILLS = 5;
  private static final int CONSECUTIVE_ERRORS = 5;
  private static final int[] HOSTS = {2, 3, 4};

  /** OTLP/gRPC, unless {@code -Dvigil.traefik.otlp=http}. */
  private static final String OTLP = System.getProperty("vigil.traefik.otlp", "grpc");

  /**
   * The bound on first failing request to {@code ready=false}: the OpenTelemetry SDK's batch
   * processor in Traefik exports at least once a second (its default schedule delay), then the
   * token and access reviews (cached after the first export), the decision and the slice write, and
   * the watch, on a machine shared with other builds.
   */
  private static final long BOUND_MS = 10_000;

  /** How long a kill waits for the ejection: without the OTLP path it never comes. */
  private static final Duration EJECTION_WAIT = Duration.ofSeconds(30);

  private static E2eCluster cluster;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "ptraefik", PORT);
  @AutoClose private final HostBackends backends = new HostBackends(cluster);
  private final String ns = bed.ns();
  private Consumers traefik;

  /** One kill: the backend, when it was switched, failed first, left and rejoined the ready set. */
  private record Kill(
      String ip, long switchedMs, long firstFailureMs, long unreadyMs, long backMs) {
    long detectionMs() {
      return unreadyMs - firstFailureMs;
    }
  }

  @BeforeAll
  static void installChart() {
    cluster = E2eCluster.withChart();
  }

  @AfterEach
  void stopTraefik() {
    if (traefik != null) {
      traefik.close();
    }
  }

  @Test
  void aBackendFailingRealRequestsIsEjectedThroughTraefiksAccessLog() {
    webPool();
    InProcessOperator operator = bed.started(InProcessOperator.start(cluster, ns, null, 0));
    bed.slices().awaitReady(CONVERGE, HOSTS);
    Consumers.bindTraefikAsReporter(cluster, ns);
    traefik = Consumers.traefikReportingTo(cluster, operator.outcomePort(), TestTls.caFile(), OTLP);

    List<Kill> kills = new ArrayList<>();
    long started = System.currentTimeMillis();
    List<Request> requests;
    try (Traffic traffic =
            Traffic.viaTraefik(cluster, traefik.traefikUrl(), host(), Duration.ofSeconds(150));
        ReadyTimeline timeline = new ReadyTimeline(cluster.admin(), ns, "web")) {
      for (int h : HOSTS) {
        awaitAnswered(traffic, h, started); // Traefik routes to every backend
      }
      for (int i = 0; i < KILLS; i++) {
        kills.add(kill(HOSTS[i % HOSTS.length], timeline));
      }
      requests = traffic.soFar();
      assertThat(timeline.problems()).as("the slice watch").isEmpty();
      assertOnlyTheFailingBackendLeft(timeline.entries(), kills);
    }

    List<Long> ms = print(kills, requests);
    assertThat(ms)
        .as("first failing request -> ready=false, bound %d ms", BOUND_MS)
        .allMatch(m -> m >= 0 && m <= BOUND_MS);
  }

  /** Prints each kill and the p50/p99 for docs/passive.md; the detection times. */
  private static List<Long> print(List<Kill> kills, List<Request> requests) {
    List<Long> ms = kills.stream().map(Kill::detectionMs).toList();
    for (Kill k : kills) {
      List<Request> window = Traffic.between(requests, k.switchedMs(), k.backMs());
      System.out.printf(
          "passive-traefik: %s failed first at %d, ready=false %d ms later; Traefik's requests"
              + " until it was back: %s%n",
          k.ip(), k.firstFailureMs(), k.detectionMs(), Traffic.byBackend(window));
    }
    System.out.printf(
        "passive-traefik: OTLP/%s, first failing request -> ready=false, ms: %s; p50 %d, p99 %d,"
            + " max %d (consecutiveErrors %d)%n",
        OTLP,
        ms,
        Traffic.percentile(ms, 50),
        Traffic.percentile(ms, 99),
        ms.stream().mapToLong(Long::longValue).max().orElseThrow(),
        CONSECUTIVE_ERRORS);
    return ms;
  }

  /**
   * Backend {@code host} answers 503 to real requests until the slice shows it not ready (it must
   * be an ejection: the pool's status says Ejected, not Down), then healthy again until its
   * ejection ends.
   */
  private Kill kill(int host, ReadyTimeline timeline) {
    String name = "web-" + host;
    String ip = TestHosts.address(host);
    long switched = System.currentTimeMillis();
    backends.mode(name, "errors");
    long unready;
    try {
      unready = timeline.waitFor(ip, false, switched, EJECTION_WAIT);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          ip
              + " answered 503 to real requests through Traefik but stayed ready for "
              + EJECTION_WAIT
              + " (Traefik's log: $VIGIL_E2E_STATE/consumers/logs/traefik.log); its backend"
              + " failed first at "
              + backends.firstFailure(name, switched),
          e);
    }
    long firstFailure =
        backends
            .firstFailure(name, switched)
            .orElseThrow(() -> new AssertionError(name + " logged no failed request"));
    awaitState(ip, BackendState.EJECTED);
    backends.mode(name, "healthy");
    long back = timeline.waitFor(ip, true, unready, CONVERGE);
    return new Kill(ip, switched, firstFailure, unready, back);
  }

  /**
   * Every view of the slices listed all three backends, and the only one ever not ready was the one
   * failing at that moment, between its switch and its return.
   */
  private static void assertOnlyTheFailingBackendLeft(
      List<ReadyTimeline.Entry> entries, List<Kill> kills) {
    Set<String> all = PublishedSlices.ips(HOSTS);
    for (ReadyTimeline.Entry e : entries) {
      assertThat(e.ready().keySet()).as("endpoints at %d", e.atMs()).isEqualTo(all);
      Set<String> notReady = new TreeSet<>();
      e.ready()
          .forEach(
              (ip, ready) -> {
                if (!ready) {
                  notReady.add(ip);
                }
              });
      if (notReady.isEmpty()) {
        continue;
      }
      Kill during =
          kills.stream()
              .filter(k -> k.switchedMs() <= e.atMs() && e.atMs() <= k.backMs())
              .findFirst()
              .orElseThrow(
                  () ->
                      new AssertionError(
                          notReady
                              + " not ready at "
                              + e.atMs()
                              + ", outside every kill "
                              + kills));
      assertThat(notReady)
          .as("not ready at %d, during %s", e.atMs(), during)
          .containsExactly(during.ip());
    }
  }

  /**
   * The policy (passive: 5 consecutive errors), Pods web-2..4 and their backends, pool, Ingress.
   */
  private void webPool() {
    HealthPolicy policy = Fixtures.policy(ns, "passive", "1s", "300ms");
    policy.getSpec().getPassive().setConsecutiveErrors(CONSECUTIVE_ERRORS);
    policy.getSpec().getPassive().setBaseEjectionTime("4s");
    policy.getSpec().getPassive().setMaxEjectionTime("12s");
    policy.getSpec().getPassive().setMaxEjectionPercent(50); // one of three
    cluster.admin().resource(policy).create();
    for (int h : HOSTS) {
      backends.start("web-" + h, h, TestHosts.address(h), PORT, "healthy");
      cluster.createRunningPod(ns, "web-" + h, "web", TestHosts.address(h));
    }
    cluster.admin().resource(Fixtures.pool(ns, "web", "passive", "web", PORT)).create();
    Consumers.routeToWeb(cluster, ns, host(), SERVICE_PORT);
  }

  private String host() {
    return "web." + ns + ".test";
  }

  /** Until the pool's status shows backend {@code ip} in {@code state}. */
  private void awaitState(String ip, BackendState state) {
    await()
        .atMost(Duration.ofMillis(3_500))
        .pollInterval(Duration.ofMillis(100))
        .untilAsserted(
            () -> {
              BackendPool pool =
                  cluster
                      .admin()
                      .resources(BackendPool.class)
                      .inNamespace(ns)
                      .withName("web")
                      .get();
              List<BackendStatus> all =
                  pool.getStatus() == null || pool.getStatus().getBackends() == null
                      ? List.of()
                      : pool.getStatus().getBackends();
              assertThat(all)
                  .as("status of %s", ip)
                  .filteredOn(b -> ip.equals(b.getAddress()))
                  .extracting(BackendStatus::getState)
                  .containsExactly(state);
            });
  }

  /**
   * Until {@code t} logs a request started after {@code sinceMs} that backend {@code h} answered.
   */
  private static void awaitAnswered(Traffic t, int h, long sinceMs) {
    String ip = TestHosts.address(h);
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                t.soFar().stream()
                    .anyMatch(r -> r.startMs() >= sinceMs && r.ok() && ip.equals(r.backend())));
  }
}
