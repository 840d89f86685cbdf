package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.OperatorConfig;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.security.Fabric8Reviewer;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.LoopbackDns;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.ReviewStubs;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributes;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.logs.v1.LogRecord;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The real operator on the mock API server with real loopback backends, fed by nothing but OTLP: a
 * Traefik-shaped reporter makes real requests and exports its access log records over OTLP/HTTP to
 * the operator's intake port; the operator maps them to the pool through its own index of the
 * pools' members and ejects the backend whose real requests fail. Reviews go through the Fabric8
 * reviewer to a second mock server: token {@code traefik} may create {@code backendpools/outcomes}
 * in {@code shop}.
 */
class OtlpPassiveIT {
  private static final String REPORTER = "system:serviceaccount:ingress:traefik";

  private static final String HOSTNAME = "web.shop.test";

  /** How the pool names its backends. */
  private enum Backends {
    PODS,
    ADDRESSES,
    HOSTNAME
  }

  @AutoClose private final MockCluster cluster = MockCluster.start();
  @AutoClose private final LoopbackDns dns = LoopbackDns.start();
  private final KubernetesClient client = cluster.client();
  private KubernetesMockServer reviewServer;
  private KubernetesClient reviewClient;
  private final String ns = "shop";
  private MockCluster.Replica operator;
  private List<DemoBackend> backends;
  private final HttpClient http = TestTls.client();

  @BeforeEach
  void setUp() {
    reviewServer = new KubernetesMockServer(false);
    reviewServer.init(InetAddress.getLoopbackAddress(), 0);
    ReviewStubs.tokenReviews(
        reviewServer,
        review ->
            !"traefik".equals(review.getSpec().getToken())
                ? new TokenReviewStatusBuilder().withAuthenticated(false).build()
                : new TokenReviewStatusBuilder()
                    .withAuthenticated(true)
                    .withAudiences("vigil.dev")
                    .withNewUser()
                    .withUsername(REPORTER)
                    .withUid("uid-traefik")
                    .endUser()
                    .build());
    ReviewStubs.accessReviews(
        reviewServer,
        review -> {
          ResourceAttributes a = review.getSpec().getResourceAttributes();
          boolean allowed =
              REPORTER.equals(review.getSpec().getUser())
                  && "create".equals(a.getVerb())
                  && "outcomes".equals(a.getSubresource())
                  && ns.equals(a.getNamespace());
          return new SubjectAccessReviewStatusBuilder().withAllowed(allowed).build();
        });
    reviewClient = reviewServer.createClient();
  }

  @AfterEach
  void tearDown() {
    cluster.close();
    reviewClient.close();
    reviewServer.destroy();
  }

  /**
   * {@code n} backends: Pods of a selector, or targets with no Pod: static addresses, or one
   * hostname that the loopback DNS server resolves to all of them.
   */
  private void start(int n, Backends kind) {
    var policy = Fixtures.policy(ns, "fast", "300ms", "250ms");
    policy.getSpec().getPassive().setMaxEjectionPercent(25);
    client.resource(policy).create();
    if (kind != Backends.PODS) {
      backends = new ArrayList<>();
      StringBuilder entries = new StringBuilder();
      String[] ips = new String[n];
      for (int i = 0; i < n; i++) {
        ips[i] = "127.0.0." + (10 + i);
        backends.add(cluster.backend(ips[i]));
        entries.append("  - {address: ").append(ips[i]).append("}\n");
      }
      if (kind == Backends.HOSTNAME) {
        dns.answer(HOSTNAME, 30, ips);
        entries = new StringBuilder("  - {hostname: " + HOSTNAME + "}\n");
      }
      client.resource(targetsPool(entries.toString())).create();
    } else {
      backends = cluster.pods(ns, "web", n, 10);
      client.resource(Fixtures.pool(ns, "web", "fast", "web", cluster.port())).create();
    }
    operator =
        cluster.operator(
            OperatorConfig.embedded(
                "--namespaces=" + ns,
                "--dns-server=" + dns.flag(),
                "--refuse-target-networks=none",
                "--status-interval-ms=200",
                "--tls-cert-file=" + TestTls.certFile(),
                "--tls-key-file=" + TestTls.keyFile()),
            o ->
                o.reviewer(
                    Fabric8Reviewer.forAudience(reviewClient, Fabric8Reviewer.DEFAULT_AUDIENCE)));
    await().atMost(Duration.ofSeconds(15)).until(() -> cluster.readyIps(ns).size() == n);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> operator.meters().get("vigil_otlp_backend_addresses").gauge().value() >= n);
  }

  private BackendPool targetsPool(String entries) {
    return io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
        """
        apiVersion: vigil.dev/v1alpha1
        kind: BackendPool
        metadata: {name: web, namespace: %s}
        spec:
          policyRef: {name: fast}
          targets:
        %s  ports:
          - {name: http, port: 80, targetPort: %d, protocol: TCP}
        """
            .formatted(ns, entries, cluster.port()),
        BackendPool.class);
  }

  /** What Traefik does: proxies a real request and logs it (its OTLP access log record). */
  private LogRecord proxied(int backend) throws Exception {
    DemoBackend b = backends.get(backend);
    HttpResponse<Void> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://" + b.host() + ":" + b.port() + "/cart"))
                .build(),
            HttpResponse.BodyHandlers.discarding());
    return OtlpClients.traefik(b.host() + ":" + b.port(), r.statusCode(), r.statusCode());
  }

  private ExportLogsServiceResponse export(List<LogRecord> records) throws Exception {
    HttpResponse<byte[]> r =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "https://127.0.0.1:"
                            + operator.running().outcomePort()
                            + OtlpReceiver.HTTP_PATH))
                .header("Authorization", "Bearer traefik")
                .header("Content-Type", "application/x-protobuf")
                .POST(
                    HttpRequest.BodyPublishers.ofByteArray(
                        OtlpClients.traefikExport(records).toByteArray()))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).isEqualTo(200);
    return ExportLogsServiceResponse.parseFrom(r.body());
  }

  private Set<String> ipsExcept(int out) {
    Set<String> ips = new TreeSet<>();
    for (int i = 0; i < backends.size(); i++) {
      if (i != out) {
        ips.add(backends.get(i).host());
      }
    }
    return ips;
  }

  @Test
  void aBackendWhoseRealRequestsFailIsEjectedFromOtlpRecordsAlone() throws Exception {
    ejectedFromOtlpRecords(Backends.PODS, "web-1");
  }

  @Test
  void aTargetThatIsNoPodIsEjectedFromOtlpRecordsByItsAddress() throws Exception {
    ejectedFromOtlpRecords(Backends.ADDRESSES, "127.0.0.11");
  }

  /**
   * A hostname's answers are resolved by every replica's index too (not only by the pool's owner):
   * a record is mapped where it arrives, before it is routed.
   */
  @Test
  void aHostnameTargetIsEjectedFromOtlpRecordsByTheAddressItResolvesTo() throws Exception {
    ejectedFromOtlpRecords(Backends.HOSTNAME, HOSTNAME + "/127.0.0.11");
  }

  private void ejectedFromOtlpRecords(Backends kind, String failingId) throws Exception {
    start(4, kind);
    backends.get(1).set(Mode.TRAFFIC_FAILS).toCompletionStage().toCompletableFuture().join();
    List<LogRecord> records = new ArrayList<>();
    for (int round = 0; round < 5; round++) {
      for (int i = 0; i < backends.size(); i++) {
        records.add(proxied(i));
      }
    }

    ExportLogsServiceResponse answer = export(records);

    assertThat(answer.hasPartialSuccess()).as(answer.toString()).isFalse();
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> cluster.readyIps(ns).equals(ipsExcept(1)));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                pool().getStatus().getBackends().stream()
                    .anyMatch(
                        b -> failingId.equals(b.getPod()) && b.getState() == BackendState.EJECTED));
  }

  private BackendPool pool() {
    return client.resources(BackendPool.class).inNamespace(ns).withName("web").get();
  }
}
