package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.e2e.TestHosts.Mode;
import dev.vigil.inspect.TopReport;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code kubectl vigil} found by kubectl's own plugin discovery ({@code bin/kubectl-vigil} on PATH)
 * and run against the real API server while the operator publishes a pool with one backend of each
 * kind: Up, Down (its backend refuses), Ejected (a bound reporter's failed requests) and Draining
 * (the kubelet's Ready turned False), plus one ejection the cap refused.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class KubectlVigilE2E {
  private static final int PORT = 8080;
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static E2eCluster cluster;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "plugin", PORT);
  private final String ns = bed.ns();
  private final TestHosts hosts = bed.hosts();
  private InProcessOperator operator;

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.withChart();
  }

  @Test
  void whyExplainsAnUpADownAnEjectedAndADrainingPodAndTopRanksThePool() throws Exception {
    HealthPolicy policy = Fixtures.policy(ns, "fast", "500ms", "300ms");
    policy.getSpec().getPassive().setBaseEjectionTime("120s");
    policy.getSpec().getPassive().setMaxEjectionTime("240s");
    policy.getSpec().getPassive().setMaxEjectionPercent(25);
    policy.getSpec().setPanicThresholdPercent(0); // each Pod's own verdict, never overridden
    cluster.admin().resource(policy).create();
    for (int h = 1; h <= 4; h++) {
      hosts.start(h);
      cluster.createRunningPod(ns, "web-" + h, "web", TestHosts.address(h));
    }
    cluster.admin().resource(Fixtures.pool(ns, "web", "fast", "web", PORT)).create();
    OutcomeReporter reporter = OutcomeReporter.bind(cluster, ns, "reporter");
    operator = bed.started(InProcessOperator.start(cluster, ns, null, 0));
    awaitStates(Map.of("web-1", "UP", "web-2", "UP", "web-3", "UP", "web-4", "UP"));

    hosts.set(2, Mode.REFUSE);
    HttpResponse<String> r =
        OutcomeReporter.post(
            operator.outcomePort(),
            ns,
            reporter.token(),
            OutcomeReporter.failures(ns, TestHosts.address(3), 8, PORT));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    cluster
        .admin()
        .pods()
        .inNamespace(ns)
        .withName("web-4")
        .editStatus(
            p -> {
              for (PodCondition c : p.getStatus().getConditions()) {
                if (c.getType().equals("Ready")) {
                  c.setStatus("False");
                }
              }
              return p;
            });
    awaitStates(Map.of("web-1", "UP", "web-2", "DOWN", "web-3", "EJECTED", "web-4", "DRAINING"));
    // A second ejection would put 2 of 4 out, over the 25 % cap: refused, web-1 stays Up.
    r =
        OutcomeReporter.post(
            operator.outcomePort(),
            ns,
            reporter.token(),
            OutcomeReporter.failures(ns, TestHosts.address(1), 8, PORT));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    await()
        .atMost(CONVERGE)
        .until(
            () ->
                cluster.admin().v1().events().inNamespace(ns).list().getItems().stream()
                    .anyMatch(e -> "EjectionRefused".equals(e.getReason())));

    String plugins = cluster.kubectlWithPlugin("plugin", "list").out();
    assertThat(plugins).contains(cluster.path("bin/kubectl-vigil").toString());

    String up = why("web-1");
    assertThat(up)
        .contains("Pod " + ns + "/web-1  IP " + TestHosts.address(1) + "  kubelet Ready: True")
        .contains("BackendPool web  (policy fast, HTTP every 500ms, rise 2, fall 3)")
        .contains("pool:       1/4 available, panic: no (panic disabled)")
        .contains("state:      Up since ")
        .containsPattern("last probe: passed \\S+ \\([\\dmh]+s? ago\\), \\d+ ms: status 200")
        .contains("ejection:   not ejected (0 ejections counted)")
        .contains("slice:      ready=true serving=true terminating=false")
        .contains("traffic:    YES")
        .contains("to change:  nothing: it takes traffic while its probes pass");

    assertThat(why("web-2"))
        .contains("state:      Down since ")
        .containsPattern("last probe: failed \\S+ \\([\\dmh]+s? ago\\), \\d+ ms: .*refused")
        .contains("slice:      ready=false serving=false terminating=false")
        .contains("traffic:    NO")
        .contains("to change:  2 passing probes in a row bring it Up (one every 500ms)");

    assertThat(why("web-3"))
        .contains("state:      Ejected since ")
        .containsPattern(
            "ejection:   ejected until \\S+ \\(in [\\dmh]+s?\\) \\(1 ejection counted\\)")
        .contains("traffic:    NO")
        .contains("to change:  its ejection ends ");

    assertThat(why("web-4"))
        .contains("kubelet Ready: False")
        .contains("state:      Draining since ")
        .contains("traffic:    NO")
        .contains("to change:  the kubelet marks the Pod Ready again");

    long started = System.nanoTime();
    E2eCluster.Result top = cluster.kubectlWithPlugin("vigil", "top", "-n", ns).assertOk();
    System.out.println(
        "kubectl vigil top: "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
            + " ms\n"
            + top.out());
    var lines = top.out().lines().toList();
    assertThat(lines.get(0).split("\\s+")).containsExactlyElementsOf(TopReport.HEADER);
    String[] row = lines.get(1).split("\\s+");
    assertThat(row).startsWith(ns, "web", "1/4", "75%", "1", "1", "0", "1", "0", "false");
    assertThat(Integer.parseInt(row[10])).isGreaterThanOrEqualTo(1);

    E2eCluster.Result missing = cluster.kubectlWithPlugin("vigil", "why", "nope", "-n", ns);
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err()).contains("no pod and no target " + ns + "/nope");
  }

  private String why(String pod) {
    long started = System.nanoTime();
    String out = cluster.kubectlWithPlugin("vigil", "why", pod, "-n", ns).assertOk().out();
    System.out.println(
        "kubectl vigil why "
            + pod
            + ": "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
            + " ms\n"
            + out);
    return out;
  }

  private void awaitStates(Map<String, String> want) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              BackendPool p =
                  cluster
                      .admin()
                      .resources(BackendPool.class)
                      .inNamespace(ns)
                      .withName("web")
                      .get();
              if (p == null || p.getStatus() == null) {
                return false;
              }
              Map<String, String> have =
                  p.getStatus().getBackends().stream()
                      .filter(b -> b.getState() != null)
                      .collect(Collectors.toMap(BackendStatus::getPod, b -> b.getState().name()));
              return have.equals(want);
            });
  }
}
