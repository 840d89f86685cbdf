package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.deploy.RbacCalls;
import dev.vigil.deploy.RbacCalls.Grant;
import dev.vigil.e2e.TestHosts.Mode;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Least privilege, proven (issue 12): a representative run of the real operator, authenticated as
 * the chart's ServiceAccount, with everything on (leader election, a managed Service, probes that
 * change the verdict, slices added and removed, Events, status, reporters reviewed over TLS, secure
 * metrics scraped); then, from the API server's audit log ({@code e2e/control-plane.sh} logs every
 * call of the ServiceAccounts in {@code vigil-system}), the (verb, group, resource/subresource) set
 * the ServiceAccount used. The test fails on any call that was denied, and on any grant of the
 * roles bound to the ServiceAccount that the run did not use, unless {@code deploy/rbac-calls.yaml}
 * names it with an {@code auditException} (the reason it stays).
 *
 * <p>To add a permission: add the call to {@code deploy/rbac-calls.yaml} and the chart's rules
 * ({@code RbacCallsTest} keeps them equal); if this run does not make it (e.g. only on failover or
 * after a conflict), give it an {@code auditException}.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class LeastPrivilegeE2E {
  private static final int PORT = 8080;
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static final String USER =
      "system:serviceaccount:" + E2eCluster.RELEASE_NAMESPACE + ":" + E2eCluster.RELEASE;

  @Test
  void theChartGrantsOnlyTheCallsARealRunMakesAndNoneIsDenied() throws Exception {
    E2eCluster cluster = E2eCluster.withChart();
    KubernetesClient admin = cluster.admin();
    AuditLog audit = new AuditLog(cluster.auditLog());
    String ns = cluster.freshNamespace("lp");
    TestHosts hosts = new TestHosts(cluster, PORT);
    OperatorLog log = OperatorLog.attach();
    PublishedSlices slices = new PublishedSlices(admin, ns, "web");
    long mark = audit.mark();
    try {
      serviceAccountBoundTo(cluster, ns, "reporter", "vigil-outcome-reporter", false);
      serviceAccountBoundTo(cluster, ns, "scraper", "vigil-metrics-reader", true);
      admin.resource(Fixtures.policy(ns, "fast", "500ms", "300ms")).create();
      for (int h = 1; h <= 3; h++) {
        hosts.start(h);
        cluster.createRunningPod(ns, "web-" + h, "web", TestHosts.address(h));
      }
      BackendPool pool = Fixtures.pool(ns, "web", "fast", "web", PORT);
      pool.getSpec().setMaxEndpointsPerSlice(2); // three backends: two slices, later one
      admin.resource(pool).create();

      try (InProcessOperator operator =
          InProcessOperator.startEverything(cluster, ns, "lp-" + ns)) {
        slices.awaitReady(CONVERGE, 1, 2, 3);
        assertThat(slices.list()).hasSize(2);

        hosts.set(2, Mode.REFUSE); // slice update, status, a BackendDown Event
        slices.awaitReady(CONVERGE, 1, 3);
        awaitEvent(admin, ns, "BackendDown");

        HttpClient https = TestTls.client();
        HttpResponse<String> report =
            https.send(
                HttpRequest.newBuilder(
                        URI.create(
                            "https://127.0.0.1:"
                                + operator.outcomePort()
                                + OutcomeIntake.path(ns, "web")))
                    .header(
                        "Authorization",
                        "Bearer "
                            + cluster.token(
                                ns,
                                "reporter",
                                dev.vigil.security.Fabric8Reviewer.DEFAULT_AUDIENCE))
                    .header("Content-Type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "[{\"backend\":\"%s:%d\",\"ok\":true,\"status\":200}]"
                                .formatted(TestHosts.address(1), PORT)))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(report.statusCode()).as(report.body()).isEqualTo(200);
        HttpResponse<String> scrape =
            https.send(
                HttpRequest.newBuilder(
                        URI.create("https://127.0.0.1:" + operator.metricsPort() + "/metrics"))
                    .header("Authorization", "Bearer " + cluster.token(ns, "scraper"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.statusCode()).as(scrape.body()).isEqualTo(200);

        // A new Service port: Vigil patches the Service it manages.
        admin
            .resources(BackendPool.class)
            .inNamespace(ns)
            .withName("web")
            .edit(
                p -> {
                  p.getSpec().getPorts().get(0).setPort(81);
                  return p;
                });
        await()
            .atMost(CONVERGE)
            .until(
                () ->
                    admin
                            .services()
                            .inNamespace(ns)
                            .withName("web")
                            .get()
                            .getSpec()
                            .getPorts()
                            .get(0)
                            .getPort()
                        == 81);

        // One backend fewer: two slices become one, the other is deleted.
        admin
            .pods()
            .inNamespace(ns)
            .withName("web-3")
            .withGracePeriod(0)
            .delete(); // no kubelet to wait for
        await().atMost(CONVERGE).until(() -> slices.list().size() == 1);
        slices.awaitReady(CONVERGE, 1);
      }
      assertThat(log.forbidden()).as("refusals in the operator's log").isEmpty();
    } finally {
      hosts.close();
      log.detach();
    }

    List<AuditLog.Call> calls =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> audit.callsSince(mark, USER), c -> !c.isEmpty());
    assertThat(calls)
        .as(
            "the audit log has no reads of %s: restart the control plane with this"
                + " e2e/control-plane.sh (its audit policy logs vigil-system's ServiceAccounts)",
            USER)
        .anySatisfy(c -> assertThat(c.verb()).isIn("get", "list", "watch"));
    assertThat(calls.stream().filter(c -> c.code() == 403 || c.code() == 401).map(String::valueOf))
        .as("calls by %s that the API server refused", USER)
        .isEmpty();

    Set<Grant> used =
        calls.stream()
            .filter(c -> !c.resource().isEmpty())
            .map(c -> new Grant(c.apiGroup(), c.resource(), c.verb()))
            .collect(Collectors.toCollection(TreeSet::new));
    Set<Grant> granted = grantedTo(admin, E2eCluster.RELEASE_NAMESPACE, E2eCluster.RELEASE);
    RbacCalls listed = RbacCalls.load(cluster.path("deploy/rbac-calls.yaml"));
    Map<Grant, String> exceptions = listed.auditExceptions();
    System.out.println("LeastPrivilegeE2E: used by " + USER + ": " + used);
    System.out.println("LeastPrivilegeE2E: granted: " + granted);
    used.stream()
        .filter(exceptions::containsKey)
        .forEach(
            g ->
                System.out.println(
                    "LeastPrivilegeE2E: "
                        + g
                        + " was used although deploy/rbac-calls.yaml lists it as an audit"
                        + " exception ("
                        + exceptions.get(g)
                        + ")"));

    Set<Grant> unused = new TreeSet<>(granted);
    unused.removeAll(used);
    unused.removeAll(exceptions.keySet());
    assertThat(unused)
        .as(
            "granted to %s but not used by this run: remove them from the chart and"
                + " deploy/rbac-calls.yaml, or give them an auditException there (why they stay)",
            USER)
        .isEmpty();
    Set<Grant> missing = new TreeSet<>(used);
    missing.removeAll(granted);
    assertThat(missing).as("used but granted by no bound role (wildcards?)").isEmpty();
  }

  /** Every (group, resource, verb) the roles bound to the ServiceAccount grant, anywhere. */
  private static Set<Grant> grantedTo(KubernetesClient admin, String namespace, String name) {
    List<PolicyRule> rules = new ArrayList<>();
    for (ClusterRoleBinding b : admin.rbac().clusterRoleBindings().list().getItems()) {
      if (names(b.getSubjects(), namespace, name)) {
        rules.addAll(rulesOf(admin, b.getRoleRef(), null));
      }
    }
    for (RoleBinding b : admin.rbac().roleBindings().inAnyNamespace().list().getItems()) {
      if (names(b.getSubjects(), namespace, name)) {
        rules.addAll(rulesOf(admin, b.getRoleRef(), b.getMetadata().getNamespace()));
      }
    }
    rules.removeIf(r -> r.getResources() == null || r.getResources().isEmpty());
    return RbacCalls.grantsOf(rules);
  }

  private static boolean names(List<Subject> subjects, String namespace, String name) {
    return subjects != null
        && subjects.stream()
            .anyMatch(
                s ->
                    "ServiceAccount".equals(s.getKind())
                        && name.equals(s.getName())
                        && namespace.equals(s.getNamespace()));
  }

  private static List<PolicyRule> rulesOf(
      KubernetesClient admin, RoleRef ref, String bindingNamespace) {
    if ("ClusterRole".equals(ref.getKind())) {
      return admin.rbac().clusterRoles().withName(ref.getName()).get().getRules();
    }
    return admin
        .rbac()
        .roles()
        .inNamespace(bindingNamespace)
        .withName(ref.getName())
        .get()
        .getRules();
  }

  /** A ServiceAccount in {@code ns} bound to one of the chart's ClusterRoles. */
  private static void serviceAccountBoundTo(
      E2eCluster cluster, String ns, String sa, String clusterRole, boolean clusterWide) {
    cluster.serviceAccount(ns, sa);
    if (clusterWide) {
      cluster.bindClusterRole(ns + "-" + sa, clusterRole, ns, sa);
    } else {
      cluster.bindRole(ns, sa, "ClusterRole", clusterRole, sa);
    }
  }

  private static void awaitEvent(KubernetesClient admin, String ns, String reason) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () ->
                admin.v1().events().inNamespace(ns).list().getItems().stream()
                    .anyMatch(e -> reason.equals(e.getReason())));
  }
}
