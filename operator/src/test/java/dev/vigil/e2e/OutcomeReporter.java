package dev.vigil.e2e;

import dev.vigil.passive.IdempotencyKey;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.testing.TestTls;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A reporter of real-request outcomes to the in-process operator's intake (docs/design.md §4): a
 * ServiceAccount in the pool's namespace, optionally bound to the chart's {@code
 * vigil-outcome-reporter} ClusterRole, posting over TLS to the pool's URL of pool {@code web}.
 */
final class OutcomeReporter {
  /** The audience the intake accepts tokens for. */
  static final String AUDIENCE = "vigil.dev";

  private static final HttpClient HTTP = TestTls.client();

  private final E2eCluster cluster;
  private final String namespace;
  private final String serviceAccount;

  private OutcomeReporter(E2eCluster cluster, String namespace, String serviceAccount) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.serviceAccount = serviceAccount;
  }

  /** The ServiceAccount, without a binding: its reports are refused. */
  static OutcomeReporter unbound(E2eCluster cluster, String namespace, String serviceAccount) {
    cluster.serviceAccount(namespace, serviceAccount);
    return new OutcomeReporter(cluster, namespace, serviceAccount);
  }

  /** The ServiceAccount with a RoleBinding (in the pool's namespace) to the reporter role. */
  static OutcomeReporter bind(E2eCluster cluster, String namespace, String serviceAccount) {
    OutcomeReporter r = unbound(cluster, namespace, serviceAccount);
    cluster.bindRole(
        namespace, serviceAccount, "ClusterRole", "vigil-outcome-reporter", serviceAccount);
    return r;
  }

  /** A token for the intake's audience, as a projected token volume would hold. */
  String token() {
    return cluster.token(namespace, serviceAccount, AUDIENCE);
  }

  /** The ServiceAccount's token for the API server (not the intake's audience). */
  String apiServerToken() {
    return cluster.token(namespace, serviceAccount);
  }

  /** Posts {@code n} upstream 503s for {@code ip:port} with an intake token; the HTTP status. */
  int report(int intakePort, String ip, int n, int port) throws Exception {
    return post(intakePort, namespace, token(), failures(namespace, ip, n, port)).statusCode();
  }

  /** A batch of {@code n} failed outcomes (upstream 503) of backend {@code ip:port} of pool web. */
  static String failures(String namespace, String ip, int n, int port) {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      items.add(
          "{\"namespace\":\"%s\",\"pool\":\"web\",\"backend\":\"%s:%d\",\"ok\":false,\"status\":503,\"origin\":\"upstream\",\"latencyMs\":3}"
              .formatted(namespace, ip, port));
    }
    return "[" + String.join(",", items) + "]";
  }

  /** POSTs {@code body} to pool web's intake URL, with {@code token} when not null. */
  static HttpResponse<String> post(int intakePort, String namespace, String token, String body)
      throws Exception {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(
                URI.create(
                    "https://127.0.0.1:" + intakePort + OutcomeIntake.path(namespace, "web")))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            // a batch of its own: a retry of it would send this key again
            .header(IdempotencyKey.HEADER, "\"" + java.util.UUID.randomUUID() + "\"")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      req.header("Authorization", "Bearer " + token);
    }
    return HTTP.send(req.build(), HttpResponse.BodyHandlers.ofString());
  }
}
