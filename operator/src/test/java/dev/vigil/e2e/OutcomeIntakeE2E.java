package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The outcome intake (DESIGN §4) with a real TokenReview and SubjectAccessReview, made by the
 * operator as the chart's ServiceAccount, over TLS: a reporter bound to the chart's
 * outcome-reporter ClusterRole with a token for Vigil's audience is accepted and its failures eject
 * the backend; the same reporter's API-server token gets 401; a ServiceAccount without the binding
 * gets 403 and changes nothing; no token gets 401; plain HTTP gets no HTTP answer.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OutcomeIntakeE2E {
  private static final int PORT = 8080;
  private static final String AUDIENCE = "vigil.dev";
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static E2eCluster cluster;

  private final HttpClient http = TestTls.client();
  private String ns;
  private TestHosts hosts;
  private OperatorLog log;
  private PublishedSlices slices;
  private InProcessOperator operator;

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.get();
    cluster.installChart();
  }

  @BeforeEach
  void setUp() {
    ns = cluster.freshNamespace("intake");
    hosts = new TestHosts(cluster, PORT);
    log = OperatorLog.attach();
    slices = new PublishedSlices(cluster.admin(), ns, "web");
  }

  @AfterEach
  void tearDown() {
    try {
      if (operator != null) {
        operator.close();
      }
      hosts.close();
    } finally {
      log.detach();
    }
    assertThat(log.forbidden()).as("requests the chart's RBAC refused").isEmpty();
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
    for (String sa : List.of("reporter", "stranger")) {
      admin
          .serviceAccounts()
          .inNamespace(ns)
          .resource(
              new ServiceAccountBuilder().withNewMetadata().withName(sa).endMetadata().build())
          .create();
    }
    admin
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName("reporter")
                .withNamespace(ns)
                .endMetadata()
                .withNewRoleRef(
                    "rbac.authorization.k8s.io", "ClusterRole", "vigil-outcome-reporter")
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName("reporter")
                .withNamespace(ns)
                .endSubject()
                .build())
        .create();

    operator = InProcessOperator.start(cluster, ns, null, 0);
    awaitReady(1, 2, 3);
    String victim = TestHosts.address(2);
    String failures = failures(victim, 8);

    HttpResponse<String> none = post(null, failures);
    assertThat(none.statusCode()).as(none.body()).isEqualTo(401);

    HttpResponse<String> apiAudience = post(cluster.token(ns, "reporter"), failures);
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

    HttpResponse<String> stranger = post(cluster.token(ns, "stranger", AUDIENCE), failures);
    assertThat(stranger.statusCode()).as(stranger.body()).isEqualTo(403);
    assertThat(stranger.body()).contains("system:serviceaccount:" + ns + ":stranger");
    Thread.sleep(2_000);
    assertThat(slices.readyIps()).as("a refused report changes nothing").hasSize(3);

    HttpResponse<String> reporter = post(cluster.token(ns, "reporter", AUDIENCE), failures);
    assertThat(reporter.statusCode()).as(reporter.body()).isEqualTo(200);
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

  private static String failures(String ip, int n) {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      items.add(
          "{\"namespace\":\"%s\",\"pool\":\"web\",\"backend\":\"%s:%d\",\"ok\":false,\"status\":503,\"origin\":\"upstream\",\"latencyMs\":3}"
              .formatted("NS", ip, PORT));
    }
    return "[" + String.join(",", items) + "]";
  }

  private HttpResponse<String> post(String token, String body) throws Exception {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(
                URI.create(
                    "https://127.0.0.1:" + operator.outcomePort() + OutcomeIntake.path(ns, "web")))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.replace("NS", ns)));
    if (token != null) {
      req.header("Authorization", "Bearer " + token);
    }
    return http.send(req.build(), HttpResponse.BodyHandlers.ofString());
  }

  private BackendPool pool() {
    return cluster.admin().resources(BackendPool.class).inNamespace(ns).withName("web").get();
  }

  private void awaitReady(int... hostIndexes) {
    slices.awaitReady(CONVERGE, hostIndexes);
  }
}
