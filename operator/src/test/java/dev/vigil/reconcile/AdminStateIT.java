package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.AdminStateEntry;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.demo.DemoBackend;
import dev.vigil.inspect.AdminStateCommand;
import dev.vigil.inspect.Console;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 3, admin states: the real operator against the Fabric8 mock API server (CRUD mode),
 * each Pod a real loopback backend. {@code vigil drain|maint|ready POD} (the CLI, one JSON merge
 * patch) and a {@code spec.adminStates} entry each change the slice as docs/decision.md says, and
 * back: drain publishes {@code ready=false, serving=true, terminating=true}, maint leaves the
 * slice, ready restores; status shows the state and who holds it.
 */
class AdminStateIT {
  private static final String NS = "shop";

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();

  @Test
  void drainMaintAndReadyByTheCliChangeTheSliceAndBack() {
    List<DemoBackend> b = startPool(3);
    String web0 = b.get(0).host();

    assertThat(cli("drain", "web-0")).contains("admin state drain");
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(drained()));
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.DRAINING);
    assertThat(status("web-0").getReason()).isEqualTo("drain by admin");
    assertThat(cluster.readyIps(NS)).containsExactlyInAnyOrder(b.get(1).host(), b.get(2).host());

    cli("maint", "web-0");
    await().atMost(PATIENCE).until(() -> !endpoints().containsKey(web0));
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.MAINT);
    assertThat(endpoints()).containsOnlyKeys(b.get(1).host(), b.get(2).host());

    assertThat(cli("ready", "web-0")).contains("admin state lifted");
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(ready()));
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.UP);
    // a real API server removes the key; the mock server's merge patch keeps it as null
    assertThat(client.pods().inNamespace(NS).withName("web-0").get().getMetadata().getAnnotations())
        .extracting(a -> a.get("vigil.dev/admin-state"))
        .isNull();
  }

  @Test
  void aSpecEntryHoldsTheBackendAndTheStricterOfSpecAndAnnotationApplies() {
    List<DemoBackend> b = startPool(3);
    String web1 = b.get(1).host();

    setSpec(new AdminStateEntry("web-1", AdminStateEntry.State.DRAIN));
    await().atMost(PATIENCE).until(() -> conditions(web1).equals(drained()));

    cli("maint", "web-1"); // annotation maint beats the spec's drain
    await().atMost(PATIENCE).until(() -> !endpoints().containsKey(web1));

    cli("ready", "web-1"); // the spec's drain still holds
    await().atMost(PATIENCE).until(() -> conditions(web1).equals(drained()));

    setSpec();
    await().atMost(PATIENCE).until(() -> conditions(web1).equals(ready()));
    await().atMost(PATIENCE).until(() -> state("web-1") == BackendState.UP);
  }

  @Test
  void anUnknownAnnotationValueHoldsNothingAndStatusSaysWhy() {
    List<DemoBackend> b = startPool(2);
    client
        .pods()
        .inNamespace(NS)
        .withName("web-0")
        .edit(
            p -> {
              p.getMetadata().setAnnotations(Map.of("vigil.dev/admin-state", "off"));
              return p;
            });
    await()
        .atMost(PATIENCE)
        .until(
            () ->
                status("web-0") != null
                    && String.valueOf(status("web-0").getReason())
                        .equals(
                            "annotation vigil.dev/admin-state: 'off' is not an admin state"
                                + " (drain, maint, up or ready); ignored"));
    assertThat(state("web-0")).isEqualTo(BackendState.UP);
    assertThat(conditions(b.get(0).host())).isEqualTo(ready());
  }

  private List<DemoBackend> startPool(int n) {
    List<DemoBackend> b = cluster.pods(NS, "web", n, 40);
    client.resource(Fixtures.policy(NS, "fast", "200ms", "150ms")).create();
    client.resource(Fixtures.pool(NS, "web", "fast", "web", cluster.port())).create();
    cluster.operator(MockCluster.config(NS));
    Set<String> all = new java.util.TreeSet<>();
    b.forEach(x -> all.add(x.host()));
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.readyIps(NS).equals(all));
    return b;
  }

  private static final Duration PATIENCE = Duration.ofSeconds(20);

  /**
   * Sets {@code spec.adminStates}, again until it is stored: the mock server's status writes can
   * race a spec patch and write the old spec back (a real API server keeps them apart).
   */
  private void setSpec(AdminStateEntry... entries) {
    List<String> wanted = describe(List.of(entries));
    await()
        .atMost(PATIENCE)
        .until(
            () -> {
              BackendPool stored =
                  client.resources(BackendPool.class).inNamespace(NS).withName("web").get();
              if (describe(stored.getSpec().getAdminStates()).equals(wanted)) {
                return true;
              }
              client
                  .resources(BackendPool.class)
                  .inNamespace(NS)
                  .withName("web")
                  .edit(
                      p -> {
                        p.getSpec().setAdminStates(entries.length == 0 ? null : List.of(entries));
                        return p;
                      });
              return false;
            });
  }

  private static List<String> describe(List<AdminStateEntry> entries) {
    return entries == null
        ? List.of()
        : entries.stream().map(e -> e.getPod() + "=" + e.getState()).toList();
  }

  private String cli(String command, String pod) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        new AdminStateCommand(
                new Console(
                    () -> cluster.newClient(c -> c),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8)))
            .run(command, List.of(pod, "-n", NS));
    assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
    return out.toString(StandardCharsets.UTF_8);
  }

  private Map<String, Endpoint> endpoints() {
    return cluster.endpoints(NS, "web");
  }

  private List<Boolean> conditions(String ip) {
    return cluster.conditions(NS, "web", ip);
  }

  private static List<Boolean> drained() {
    return List.of(false, true, true);
  }

  private static List<Boolean> ready() {
    return List.of(true, true, false);
  }

  private BackendStatus status(String pod) {
    return cluster.backendStatus(NS, "web", pod);
  }

  private BackendState state(String pod) {
    BackendStatus s = status(pod);
    return s == null ? null : s.getState();
  }
}
