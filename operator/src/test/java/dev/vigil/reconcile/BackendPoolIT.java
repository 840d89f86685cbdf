package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The real operator against the Fabric8 mock API server in CRUD mode, with Pods whose IPs are real
 * loopback backends that a test kills, hangs, fails or heals.
 */
class BackendPoolIT {
  private static final long INTERVAL = 300;
  private static final long TIMEOUT = 250;

  /** Fixtures.policy: rise 2, fall 3, no jitter. */
  private static final int RISE = 2;

  private static final int FALL = 3;

  /**
   * How long after the deciding probe a change may show in the slices: the runtime's event, a
   * reconcile, the slice write and the test's 20 ms poll, on a shared 2-core machine. Below one
   * interval, so a rule that needs one probe more than it should usually fails, and one that needs
   * two more always does.
   */
  private static final long PUBLISH_SLACK = 250;

  /** A server per test: see MockCluster. */
  @AutoClose private final MockCluster cluster = MockCluster.start();

  private final KubernetesMockServer server = cluster.api().server();
  private final KubernetesClient client = cluster.client();
  private final String ns = "shop";
  private MockCluster.Replica operator;
  private SimpleMeterRegistry meters;
  private final List<DemoBackend> backends = new ArrayList<>();
  private final int port = cluster.port();

  private void startOperator() {
    operator = cluster.operator(MockCluster.config(ns));
    meters = operator.meters();
  }

  /** A spec edit as a user makes it: a patch, so it never conflicts with status writes. */
  private void editPolicy(java.util.function.Consumer<HealthPolicy> change) {
    client
        .resources(HealthPolicy.class)
        .inNamespace(ns)
        .withName("fast")
        .edit(
            p -> {
              change.accept(p);
              return p;
            });
  }

  private void stopOperator() {
    if (operator != null) {
      cluster.stop(operator);
      operator = null;
    }
  }

  private void backends(int n) {
    backends.addAll(cluster.pods(ns, "web", n, 10));
  }

  private void webPool(int n) {
    client.resource(Fixtures.policy(ns, "fast", INTERVAL + "ms", TIMEOUT + "ms")).create();
    backends(n);
    client.resource(Fixtures.pool(ns, "web", "fast", "web", port)).create();
  }

  private List<EndpointSlice> slices() {
    return client
        .discovery()
        .v1()
        .endpointSlices()
        .inNamespace(ns)
        .withLabel("kubernetes.io/service-name", "web")
        .list()
        .getItems();
  }

  private Set<String> readyIps() {
    return cluster.addresses(ns, "web", true);
  }

  private Set<String> ips(int... indexes) {
    Set<String> out = new TreeSet<>();
    for (int i : indexes) {
      out.add(backends.get(i).host());
    }
    return out;
  }

  private BackendPool pool() {
    return client.resources(BackendPool.class).inNamespace(ns).withName("web").get();
  }

  private Condition condition(BackendPool pool, String type) {
    if (pool == null || pool.getStatus() == null) {
      return null;
    }
    return pool.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private void set(int backend, Mode mode) {
    backends.get(backend).set(mode).toCompletionStage().toCompletableFuture().join();
  }

  /** Active probes this operator counted, by a tag of vigil_probes (result or reason). */
  private long probes(String tag, String value) {
    return Math.round(
        meters.find("vigil_probes").tag(tag, value).counters().stream()
            .mapToDouble(Counter::count)
            .sum());
  }

  /** Returns as soon as the count grows: just after a probe, so the next is one interval away. */
  private void awaitNextProbe(LongSupplier count) {
    long before = count.getAsLong();
    await()
        .atMost(Duration.ofSeconds(2))
        .pollInterval(Duration.ofMillis(1))
        .until(() -> count.getAsLong() > before);
  }

  private BackendStatus backendStatus(String pod) {
    BackendPool p = pool();
    if (p == null || p.getStatus() == null || p.getStatus().getBackends() == null) {
      return null;
    }
    return p.getStatus().getBackends().stream()
        .filter(b -> pod.equals(b.getPod()))
        .findFirst()
        .orElse(null);
  }

  private List<String> sliceVersions() {
    return slices().stream()
        .map(s -> s.getMetadata().getName() + "@" + s.getMetadata().getResourceVersion())
        .sorted()
        .toList();
  }

  private void awaitAllReady(int n) {
    await().atMost(Duration.ofSeconds(15)).until(() -> readyIps().size() == n);
  }

  /** Each endpoint's zone by address ({@code -} for none). */
  private java.util.Map<String, String> zones() {
    java.util.Map<String, String> out = new java.util.TreeMap<>();
    for (EndpointSlice s : slices()) {
      for (Endpoint e : s.getEndpoints()) {
        out.put(e.getAddresses().get(0), e.getZone() == null ? "-" : e.getZone());
      }
    }
    return out;
  }

  @Test
  void zonesComeFromTheNodesAndFollowANodesZoneChange() {
    // as in a real cluster: the zone label is on the Node, never on the Pod
    client
        .resource(
            new io.fabric8.kubernetes.api.model.NodeBuilder()
                .withNewMetadata()
                .withName("node-1")
                .addToLabels(PoolMembers.ZONE_LABEL, "zone-a")
                .endMetadata()
                .build())
        .create();
    webPool(2);
    startOperator();
    awaitAllReady(2);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(zones())
                    .containsExactlyEntriesOf(
                        new java.util.TreeMap<>(
                            java.util.Map.of(
                                backends.get(0).host(), "zone-a",
                                backends.get(1).host(), "zone-a"))));

    client
        .nodes()
        .withName("node-1")
        .edit(
            n -> {
              n.getMetadata().getLabels().put(PoolMembers.ZONE_LABEL, "zone-b");
              return n;
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(zones().values()).containsOnly("zone-b"));
  }

  @Test
  void aDeadBackendLeavesTheReadySetWithinFallIntervalsAndReturnsWithinRise() {
    webPool(3);
    startOperator();
    awaitAllReady(3);

    // Die just after a probe that passed: the next probe comes one interval later, so the
    // fall-th failure is (fall x interval) away, refused at once (no timeout).
    DemoBackend dying = backends.get(1);
    awaitNextProbe(dying::requests);
    long died = System.nanoTime();
    set(1, Mode.REFUSE);
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> readyIps().equals(ips(0, 2)));
    long detectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - died);
    assertThat(detectMs)
        .as("Down after fall %d x interval %d ms", FALL, INTERVAL)
        .isBetween(FALL * INTERVAL - INTERVAL / 2, FALL * INTERVAL + PUBLISH_SLACK);

    // Heal just after a refused probe: rise passes, one interval apart, bring it back.
    awaitNextProbe(() -> probes("reason", "connection_refused"));
    long healed = System.nanoTime();
    set(1, Mode.HEALTHY);
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> readyIps().equals(ips(0, 1, 2)));
    long recoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed);
    System.out.printf("detection %d ms, recovery %d ms%n", detectMs, recoverMs);
    assertThat(recoverMs)
        .as("Up after rise %d x interval %d ms", RISE, INTERVAL)
        .isBetween(RISE * INTERVAL - INTERVAL / 2, RISE * INTERVAL + PUBLISH_SLACK);
  }

  @Test
  void aHangingBackendIsDetectedByTimeout() {
    webPool(3);
    startOperator();
    awaitAllReady(3);

    set(2, Mode.HANG);

    await().atMost(Duration.ofSeconds(10)).until(() -> readyIps().equals(ips(0, 1)));
    BackendPool p = pool();
    assertThat(p.getStatus().getBackends())
        .filteredOn(b -> b.getPod().equals("web-2"))
        .singleElement()
        .satisfies(b -> assertThat(b.getLastProbe().getDetail()).contains("timeout"));
  }

  @Test
  void aFlappingBackendNeverLeaves() throws Exception {
    webPool(3);
    startOperator();
    awaitAllReady(3);

    set(0, Mode.FLAP);
    long failedBefore = probes("result", "fail");
    long passedBefore = probes("result", "pass");
    long end = System.currentTimeMillis() + 3_000;
    while (System.currentTimeMillis() < end) {
      assertThat(readyIps()).isEqualTo(ips(0, 1, 2));
      Thread.sleep(50);
    }
    // Only web-0 can fail. Over 3 s at 300 ms it is probed about 10 times, every other one a 503:
    // without those failures the test would prove nothing.
    assertThat(probes("result", "fail") - failedBefore)
        .as("failed probes of the flapping backend")
        .isGreaterThanOrEqualTo(3);
    assertThat(probes("result", "pass") - passedBefore).isGreaterThanOrEqualTo(3 * 3);
    assertThat(backendStatus("web-0").getState().name()).isEqualTo("UP");
  }

  @Test
  void threeOfFourDeadEntersPanicWithAllReadyAndHealingEndsIt() {
    webPool(4);
    startOperator();
    awaitAllReady(4);

    set(1, Mode.FAILING);
    set(2, Mode.FAILING);
    set(3, Mode.REFUSE);

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Condition panic = condition(pool(), "Panic");
              return panic != null && "True".equals(panic.getStatus());
            });
    // Status and slices are written on separate paths (the slice lane may land a moment later).
    await().atMost(Duration.ofSeconds(5)).until(() -> readyIps().equals(ips(0, 1, 2, 3)));
    assertThat(pool().getStatus().getPanic()).isTrue();
    assertThat(pool().getStatus().getAvailable()).isEqualTo(1);

    set(1, Mode.HEALTHY);
    set(2, Mode.HEALTHY);
    set(3, Mode.HEALTHY);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Condition panic = condition(pool(), "Panic");
              return panic != null
                  && "False".equals(panic.getStatus())
                  && pool().getStatus().getAvailable() == 4;
            });
    await().atMost(Duration.ofSeconds(5)).until(() -> readyIps().equals(ips(0, 1, 2, 3)));
  }

  @Test
  void anInvalidPolicyKeepsTheSlicesAndSaysWhichFieldIsWrong() {
    webPool(3);
    startOperator();
    awaitAllReady(3);
    List<EndpointSlice> before = slices();

    editPolicy(p -> p.getSpec().getActive().setRise(0));

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Condition ready = condition(pool(), "Ready");
              return ready != null && "InvalidPolicy".equals(ready.getReason());
            });
    assertThat(condition(pool(), "Ready").getMessage()).contains("active.rise");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              HealthPolicy p =
                  client.resources(HealthPolicy.class).inNamespace(ns).withName("fast").get();
              return p.getStatus() != null
                  && p.getStatus().getConditions().stream()
                      .anyMatch(
                          c ->
                              c.getType().equals("Accepted")
                                  && c.getStatus().equals("False")
                                  && c.getMessage().contains("active.rise"));
            });
    set(0, Mode.REFUSE);
    sleep(1_500);
    assertThat(slices())
        .extracting(s -> s.getMetadata().getResourceVersion())
        .isEqualTo(before.stream().map(s -> s.getMetadata().getResourceVersion()).toList());
  }

  @Test
  void aMissingPolicyLeavesSlicesAsTheyWere() {
    webPool(2);
    startOperator();
    awaitAllReady(2);

    client.resources(HealthPolicy.class).inNamespace(ns).withName("fast").delete();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Condition ready = condition(pool(), "Ready");
              return ready != null && "PolicyNotFound".equals(ready.getReason());
            });
    assertThat(readyIps()).hasSize(2);
    List<String> before = sliceVersions();

    // Without a policy nothing is published: a backend that dies now stays in the slice as it was.
    set(0, Mode.REFUSE);
    sleep(FALL * INTERVAL + 2 * PUBLISH_SLACK + 600);
    assertThat(sliceVersions()).isEqualTo(before);
    assertThat(readyIps()).isEqualTo(ips(0, 1));
  }

  @Test
  void aPoolWithoutPodsSaysNoBackends() {
    client.resource(Fixtures.policy(ns, "fast", INTERVAL + "ms", TIMEOUT + "ms")).create();
    client.resource(Fixtures.pool(ns, "web", "fast", "nothing-matches", port)).create();
    startOperator();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Condition ready = condition(pool(), "Ready");
              return ready != null && "NoBackends".equals(ready.getReason());
            });
  }

  /** A Service change alone reconciles the pools publishing to it (PoolSources' Service mapper). */
  @Test
  void aSelectorAddedToTheServiceStopsPublishingWithoutAnyOtherChange() {
    webPool(2);
    startOperator();
    awaitAllReady(2);

    client
        .services()
        .inNamespace(ns)
        .withName("web")
        .edit(
            svc -> {
              svc.getSpec().setSelector(java.util.Map.of("app", "web"));
              return svc;
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(condition(pool(), "Ready"))
                    .extracting(Condition::getReason)
                    .isEqualTo("ServiceHasSelector"));
  }

  @Test
  void aDeletedPodLeavesTheSlice() {
    webPool(3);
    startOperator();
    awaitAllReady(3);

    client.pods().inNamespace(ns).withName("web-1").delete();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Set<String> all = new TreeSet<>();
              slices()
                  .forEach(s -> s.getEndpoints().forEach(e -> all.add(e.getAddresses().get(0))));
              return all.equals(ips(0, 2));
            });
  }

  @Test
  void aPolicyEditThatChangesFallKeepsBackendState() {
    webPool(3);
    startOperator();
    awaitAllReady(3);
    set(1, Mode.REFUSE);
    await().atMost(Duration.ofSeconds(10)).until(() -> readyIps().equals(ips(0, 2)));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              BackendStatus b = backendStatus("web-1");
              return b != null && b.getState().name().equals("DOWN");
            });
    String downSince = backendStatus("web-1").getSince();
    String upSince = backendStatus("web-0").getSince();
    List<String> slicesBefore = sliceVersions();

    editPolicy(p -> p.getSpec().getActive().setFall(5));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              HealthPolicy now =
                  client.resources(HealthPolicy.class).inNamespace(ns).withName("fast").get();
              return now.getStatus() != null
                  && now.getStatus().getObservedGeneration() != null
                  && now.getStatus()
                      .getObservedGeneration()
                      .equals(now.getMetadata().getGeneration());
            });

    // A reset would make every backend Unknown again and re-decide it from the next probe: the
    // end state (web-1 Down, the others Up) would be the same, but every `since` would move. An
    // Unknown backend is not published either, so the slices alone could not show a reset.
    sleep(1_000);
    assertThat(sliceVersions()).as("the edit writes no slice").isEqualTo(slicesBefore);
    assertThat(readyIps()).isEqualTo(ips(0, 2));
    assertThat(backendStatus("web-1").getState().name()).isEqualTo("DOWN");
    assertThat(backendStatus("web-1").getSince()).as("web-1 Down since").isEqualTo(downSince);
    assertThat(backendStatus("web-0").getState().name()).isEqualTo("UP");
    assertThat(backendStatus("web-0").getSince()).as("web-0 Up since").isEqualTo(upSince);
  }

  @Test
  void twoHundredFiftyPodsSplitIntoThreeSlices() {
    client.resource(Fixtures.policy(ns, "fast", "1s", "500ms")).create();
    for (int i = 0; i < 250; i++) {
      client.resource(Fixtures.pod(ns, "big-" + i, "big", "127.0.1." + (i + 1))).create();
    }
    client.resource(Fixtures.pool(ns, "web", "fast", "big", port)).create();
    startOperator();

    await().atMost(Duration.ofSeconds(20)).until(() -> slices().size() == 3);
    assertThat(slices())
        .extracting(s -> s.getEndpoints().size())
        .containsExactlyInAnyOrder(100, 100, 50);
    assertThat(slices())
        .extracting(s -> s.getMetadata().getName())
        .containsExactlyInAnyOrder("web-vigil-0", "web-vigil-1", "web-vigil-2");
  }

  @Test
  void anIdlePoolMakesNoWritesAndARestartWritesNoSlices() throws Exception {
    webPool(3);
    startOperator();
    awaitAllReady(3);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              BackendPool p = pool();
              return p.getStatus() != null && p.getStatus().getAvailable() == 3;
            });
    sleep(1_500);
    drainRequests();

    sleep(10_000);
    List<String> idleWrites = writes(drainRequests());
    assertThat(idleWrites).as("writes of an idle pool over 10 s").isEmpty();

    stopOperator();
    drainRequests();
    startOperator();
    sleep(3_000);
    List<String> restartWrites = writes(drainRequests());
    assertThat(restartWrites).filteredOn(w -> w.contains("endpointslices")).isEmpty();
    assertThat(readyIps()).isEqualTo(ips(0, 1, 2));
  }

  private List<RecordedRequest> drainRequests() throws InterruptedException {
    List<RecordedRequest> out = new ArrayList<>();
    RecordedRequest r;
    while ((r = server.takeRequest(50, TimeUnit.MILLISECONDS)) != null) {
      out.add(r);
    }
    return out;
  }

  private static List<String> writes(List<RecordedRequest> requests) {
    return requests.stream()
        .filter(r -> !r.getMethod().equals("GET"))
        .map(r -> r.getMethod() + " " + r.getPath())
        .toList();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
