package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The outcome intake (docs/design.md §4) with a real TokenReview and SubjectAccessReview, made by
 * the operator as the chart's ServiceAccount, over TLS: a reporter bound to the chart's
 * outcome-reporter ClusterRole with a token for Vigil's audience is accepted and its failures eject
 * the backend; the same reporter's API-server token gets 401; a ServiceAccount without the binding
 * gets 403 and changes nothing; no token gets 401; plain HTTP gets no HTTP answer.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OutcomeIntakeE2E {
  private static final int PORT = 8080;
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static E2eCluster cluster;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "intake", PORT);
  private final String ns = bed.ns();
  private final TestHosts hosts = bed.hosts();
  private final PublishedSlices slices = bed.slices();
  private InProcessOperator operator;

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.withChart();
  }

  @Test
  void aBoundReporterEjectsABackendAndAnUnboundOneGets403() throws Exception {
    KubernetesClient admin = cluster.admin();
    HealthPolicy policy = Fixtures.policy(ns, "fast", "500ms", "300ms");
    policy.getSpec().getPassive().setBaseEjectionTime("60s");
    policy.getSpec().getPassive().setMaxEjectionTime("120s");
    policy.getSpec().getPassive().setMaxEjectionPercent(50);
    admin.resource(policy).create();
    for (int h = 1; h <= 3; h++) {
      hosts.start(h);
      cluster.createRunningPod(ns, "web-" + h, "web", TestHosts.address(h));
    }
    admin.resource(Fixtures.pool(ns, "web", "fast", "web", PORT)).create();
    OutcomeReporter reporter = OutcomeReporter.bind(cluster, ns, "reporter");
    OutcomeReporter stranger = OutcomeReporter.unbound(cluster, ns, "stranger");

    operator = bed.started(InProcessOperator.start(cluster, ns, null, 0));
    awaitReady(1, 2, 3);
    String victim = TestHosts.address(2);
    String failures = OutcomeReporter.failures(ns, victim, 8, PORT);

    HttpResponse<String> none = post(null, failures);
    assertThat(none.statusCode()).as(none.body()).isEqualTo(401);

    HttpResponse<String> apiAudience = post(reporter.apiServerToken(), failures);
    assertThat(apiAudience.statusCode())
        .as("the reporter's own token, minted for the API server: replayable, so refused")
        .isEqualTo(401);

    try (java.net.Socket plain = new java.net.Socket("127.0.0.1", operator.outcomePort())) {
      plain.setSoTimeout(5_000);
      plain
          .getOutputStream()
          .write(
              ("POST " + OutcomeIntake.path(ns, "web") + " HTTP/1.1\r\nHost: x\r\n\r\n")
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      String answer;
      try {
        answer =
            new String(
                plain.getInputStream().readAllBytes(),
                java.nio.charset.StandardCharsets.ISO_8859_1);
      } catch (java.io.IOException reset) {
        answer = "";
      }
      assertThat(answer).as("plain HTTP gets no HTTP answer").doesNotContain("HTTP/1.");
    }

    HttpResponse<String> refused = post(stranger.token(), failures);
    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
    assertThat(refused.body()).contains("system:serviceaccount:" + ns + ":stranger");
    Thread.sleep(2_000);
    assertThat(slices.readyIps()).as("a refused report changes nothing").hasSize(3);

    HttpResponse<String> accepted = post(reporter.token(), failures);
    assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(200);
    awaitReady(1, 3);
    await()
        .atMost(CONVERGE)
        .untilAsserted(
            () ->
                assertThat(pool().getStatus().getBackends())
                    .filteredOn(b -> b.getPod().equals("web-2"))
                    .singleElement()
                    .satisfies(b -> assertThat(b.getState().name()).isEqualTo("EJECTED")));
  }

  private HttpResponse<String> post(String token, String body) throws Exception {
    return OutcomeReporter.post(operator.outcomePort(), ns, token, body);
  }

  private BackendPool pool() {
    return cluster.admin().resources(BackendPool.class).inNamespace(ns).withName("web").get();
  }

  private void awaitReady(int... hostIndexes) {
    slices.awaitReady(CONVERGE, hostIndexes);
  }
}
