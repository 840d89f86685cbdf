package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.AdminStateEntry;
import dev.vigil.api.v1alpha1.AgentCheck;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.inspect.AdminStateCommand;
import dev.vigil.inspect.Console;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.OnConflict;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 35 item 3 on the real control plane, the operator in-process as the chart's ServiceAccount
 * (the chart's RBAC and admission policy check every write): each admin state, set with {@code
 * vigil drain|maint|ready} (the command behind {@code kubectl vigil}) or a pool's {@code
 * spec.adminStates}, and each answer of a backend's HAProxy agent ({@code e2e/backend.py} on a side
 * port of its test host), changes the backend's endpoint as docs/decision.md says, and back: {@code
 * maint} leaves it out of the slice; {@code drain} publishes it ready=false, serving=true,
 * terminating=true, like a terminating Pod; the agent's {@code down} takes it out of service.
 * Published conditions are read as kube-proxy reads them, in the order ready, serving, terminating.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class AdminStateE2E {
  private static final int PORT = 8080;
  private static final int AGENT_PORT = 8081;
  private static final Duration CONVERGE = Duration.ofSeconds(30);
  private static final List<Boolean> READY = List.of(true, true, false);
  private static final List<Boolean> DRAINED = List.of(false, true, true);
  private static final List<Boolean> DOWN = List.of(false, false, false);
  private static E2eCluster cluster;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "admin", PORT);
  @AutoClose private final HostBackends backends = new HostBackends(cluster);
  private final String ns = bed.ns();
  private final KubernetesClient admin = cluster.admin();

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.withChart();
  }

  @Test
  void eachAdminStateAndEachAgentAnswerChangesTheSliceAndBack() {
    for (int h = 1; h <= 2; h++) {
      backends.startWithAgent("web-" + (h - 1), h, TestHosts.address(h), PORT, AGENT_PORT);
      cluster.createRunningPod(ns, "web-" + (h - 1), "web", TestHosts.address(h));
    }
    HealthPolicy policy = Fixtures.policy(ns, "fast", "500ms", "400ms");
    policy.getSpec().setPanicThresholdPercent(0);
    policy.getSpec().getActive().setAgent(new AgentCheck(AGENT_PORT, "500ms"));
    admin.resource(policy).create();
    admin.resource(Fixtures.pool(ns, "web", "fast", "web", PORT)).create();
    bed.started(InProcessOperator.start(cluster, ns, null));
    String web0 = TestHosts.address(1);
    String web1 = TestHosts.address(2);
    awaitConditions(web0, READY);
    awaitConditions(web1, READY);

    // an operator's admin state, through the command behind kubectl vigil
    assertThat(cli("drain", "web-0")).contains("admin state drain");
    awaitConditions(web0, DRAINED);
    assertThat(conditions(web1)).isEqualTo(READY);
    cli("maint", "web-0");
    awaitConditions(web0, List.of());
    assertThat(cli("ready", "web-0")).contains("admin state lifted");
    awaitConditions(web0, READY);

    // the pool's spec.adminStates
    setSpec(new AdminStateEntry("web-1", AdminStateEntry.State.MAINT));
    awaitConditions(web1, List.of());
    setSpec(new AdminStateEntry("web-1", AdminStateEntry.State.DRAIN));
    awaitConditions(web1, DRAINED);
    setSpec();
    awaitConditions(web1, READY);

    // the backend's own agent
    backends.agent("web-0", "drain # overloaded");
    awaitConditions(web0, DRAINED);
    backends.agent("web-0", "maint");
    awaitConditions(web0, List.of());
    backends.agent("web-0", "ready");
    awaitConditions(web0, READY);
    backends.agent("web-0", "down # disk full");
    awaitConditions(web0, DOWN);
    backends.agent("web-0", "up");
    awaitConditions(web0, READY);
    assertThat(conditions(web1)).isEqualTo(READY);
  }

  private String cli(String command, String pod) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        new AdminStateCommand(
                new Console(
                    // the command closes its client: a new one of the admin's each run
                    () ->
                        new KubernetesClientBuilder().withConfig(admin.getConfiguration()).build(),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8)))
            .run(command, List.of(pod, "-n", ns));
    assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * Edits the pool's spec, again on a conflict: the edit carries the resourceVersion it read, and
   * the operator writes the pool's status meanwhile (409 once in a CI run).
   */
  private void setSpec(AdminStateEntry... entries) {
    OnConflict.retry(
        () ->
            admin
                .resources(BackendPool.class)
                .inNamespace(ns)
                .withName("web")
                .edit(
                    p -> {
                      p.getSpec().setAdminStates(entries.length == 0 ? null : List.of(entries));
                      return p;
                    }));
  }

  private void awaitConditions(String ip, List<Boolean> want) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(conditions(ip)).as("endpoint %s", ip).isEqualTo(want));
  }

  /** The endpoint's ready, serving, terminating; empty when the slices do not list it. */
  private List<Boolean> conditions(String ip) {
    for (EndpointSlice s : new PublishedSlices(admin, ns, "web").list()) {
      for (Endpoint e : s.getEndpoints()) {
        if (e.getAddresses().contains(ip)) {
          List<Boolean> out = new ArrayList<>();
          out.add(Boolean.TRUE.equals(e.getConditions().getReady()));
          out.add(Boolean.TRUE.equals(e.getConditions().getServing()));
          out.add(Boolean.TRUE.equals(e.getConditions().getTerminating()));
          return out;
        }
      }
    }
    return List.of();
  }
}
