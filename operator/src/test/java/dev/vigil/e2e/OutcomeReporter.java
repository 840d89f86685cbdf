package dev.vigil.e2e;

import dev.vigil.passive.OutcomeIntake;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A reporter of request outcomes to the in-process operator's intake, as a proxy would post them: a
 * ServiceAccount in the pool's namespace, optionally bound to the chart's {@code
 * vigil-outcome-reporter} ClusterRole, and batches of failed requests for the pool "web".
 */
final class OutcomeReporter {
  private final E2eCluster cluster;
  private final String ns;
  private final int intakePort;
  private final HttpClient http = TestTls.client();

  OutcomeReporter(E2eCluster cluster, String ns, int intakePort) {
    this.cluster = cluster;
    this.ns = ns;
    this.intakePort = intakePort;
  }

  /** Creates the ServiceAccount {@code name}; {@code bound}: with the chart's reporter role. */
  static void createServiceAccount(E2eCluster cluster, String ns, String name, boolean bound) {
    cluster
        .admin()
        .serviceAccounts()
        .inNamespace(ns)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    if (!bound) {
      return;
    }
    cluster
        .admin()
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .endMetadata()
                .withNewRoleRef(
                    "rbac.authorization.k8s.io", "ClusterRole", "vigil-outcome-reporter")
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(name)
                .withNamespace(ns)
                .endSubject()
                .build())
        .create();
  }

  /** {@code n} failed upstream requests (503) to {@code ip:port} of the pool "web", as JSON. */
  String failures(String ip, int port, int n) {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      items.add(
          "{\"namespace\":\"%s\",\"pool\":\"web\",\"backend\":\"%s:%d\",\"ok\":false,\"status\":503,\"origin\":\"upstream\",\"latencyMs\":3}"
              .formatted(ns, ip, port));
    }
    return "[" + String.join(",", items) + "]";
  }

  /** POSTs a batch to the pool "web"'s intake URL; {@code token} null: no Authorization. */
  HttpResponse<String> post(String token, String body) throws Exception {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + intakePort + OutcomeIntake.path(ns, "web")))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      req.header("Authorization", "Bearer " + token);
    }
    return http.send(req.build(), HttpResponse.BodyHandlers.ofString());
  }
}
