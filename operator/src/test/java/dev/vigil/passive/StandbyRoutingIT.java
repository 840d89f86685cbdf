package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.OperatorConfig;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.demo.DemoBackend;
import dev.vigil.ops.LeaderAddress;
import dev.vigil.passive.RoutingIT.Answer;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.vertx.grpc.common.GrpcStatus;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A standby under unsharded leader election forwards outcomes to the leader (issue 33, routing;
 * docs/passive.md, "Routing between replicas"): replicas of the real operator on the Fabric8 mock
 * server, leader election on and sharding off (the chart with {@code sharding.enabled=false} and
 * more than one replica), real loopback backends. A reporter's JSON batch and an OTLP export sent
 * to a standby are applied by the leader at the first request (the standby answers 200 and the
 * ejection shows in the pool's status, which only the leader writes); once the leader stops, the
 * new leader writes its address on the Lease and the remaining standby forwards to it.
 */
class StandbyRoutingIT {
  private static final String NS = RoutingIT.NS;
  private static final String LEASE_NS = "vigil-system";
  private static final String POOL = "web";
  private static final int BACKENDS = 4;
  private static final int ERRORS = RoutingIT.ERRORS;

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final HttpClient http = TestTls.client();
  private final Map<String, MockCluster.Replica> replicas = new java.util.LinkedHashMap<>();
  private List<DemoBackend> backends;

  @BeforeEach
  void setUp() {
    cluster.grantLeaseRules(LEASE_NS);
    client.resource(RoutingIT.ejectingPolicy()).create();
    backends = cluster.pods(NS, POOL, BACKENDS, 20);
    client.resource(Fixtures.pool(NS, POOL, "fast", POOL, cluster.port())).create();
  }

  /** An unsharded replica with leader election, its outcome port on the test certificate. */
  private MockCluster.Replica start(String identity) {
    MockCluster.Replica r =
        cluster.operator(
            cluster.newClient(c -> c.withOauthToken(RoutingIT.SA_TOKEN)),
            OperatorConfig.embedded(
                "--namespaces=" + NS,
                "--leader-election=true",
                "--lease-name=vigil",
                "--lease-namespace=" + LEASE_NS,
                "--status-interval-ms=200",
                "--tls-cert-file=" + TestTls.certFile(),
                "--tls-key-file=" + TestTls.keyFile(),
                "--advertise-address=127.0.0.1"),
            o -> o.reviewer(RoutingIT.REVIEWER).election(MockCluster.election(identity)));
    replicas.put(identity, r);
    return r;
  }

  private Lease lease() {
    return client.leases().inNamespace(LEASE_NS).withName("vigil").get();
  }

  private String holder() {
    Lease l = lease();
    return l == null || l.getSpec() == null ? "" : l.getSpec().getHolderIdentity();
  }

  /** The identity whose outcome address the Lease carries; "" when none. */
  private String advertised() {
    Lease l = lease();
    if (l == null || l.getMetadata().getAnnotations() == null) {
      return "";
    }
    return l.getMetadata().getAnnotations().getOrDefault(LeaderAddress.HOLDER, "");
  }

  /**
   * The leader (its name on the Lease), once it probes the pool and its address is on the Lease.
   */
  private String leaderReady() {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                replicas.containsKey(holder())
                    && holder().equals(advertised())
                    && cluster.readyIps(NS).size() == BACKENDS);
    return holder();
  }

  private String backend(int i) {
    return backends.get(i).host() + ":" + cluster.port();
  }

  private BackendState state(int i) {
    BackendStatus s = cluster.backendStatus(NS, POOL, POOL + "-" + i);
    return s == null ? null : s.getState();
  }

  private static long applied(MockCluster.Replica r) {
    return r.running().runtimes().outcomesApplied();
  }

  private static double counter(MockCluster.Replica r, String name) {
    return r.meters().find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  /**
   * {@value #ERRORS} upstream errors of backend {@code i} in one batch to {@code standby}: answered
   * 200 at the first request, applied once by {@code leader}, and the backend ejected in status.
   */
  private void batchThroughStandby(MockCluster.Replica standby, MockCluster.Replica leader, int i)
      throws Exception {
    long before = applied(leader);
    Answer answer =
        RoutingIT.report(
            http,
            standby.running().outcomePort(),
            POOL,
            RoutingIT.outcomes(backend(i), false, ERRORS),
            "t");
    assertThat(answer.status()).as("the standby's answer: %s", answer).isEqualTo(200);
    assertThat(answer.accepted()).isEqualTo(ERRORS);
    assertThat(answer.reasons()).isEmpty();
    assertThat(applied(leader)).as("outcomes the leader applied").isEqualTo(before + ERRORS);
    assertThat(applied(standby)).as("outcomes the standby applied").isZero();
    await().atMost(Duration.ofSeconds(10)).until(() -> state(i) == BackendState.EJECTED);
  }

  /**
   * {@value #ERRORS} Traefik access-log records of requests backend {@code i} answered 503, in one
   * OTLP/gRPC export to {@code standby}: OK with no record rejected, applied by {@code leader}, and
   * the backend ejected in status.
   */
  private void exportThroughStandby(MockCluster.Replica standby, MockCluster.Replica leader, int i)
      throws Exception {
    long before = applied(leader);
    List<LogRecord> records = new ArrayList<>();
    for (int n = 0; n < ERRORS; n++) {
      records.add(OtlpClients.traefik(backend(i), 503, 503));
    }
    try (OtlpClients otlp = new OtlpClients(cluster.vertx(), standby.running().outcomePort())) {
      OtlpClients.GrpcAnswer answer = otlp.grpc("t", null, OtlpClients.traefikExport(records));
      assertThat(answer.status()).as(answer.message()).isEqualTo(GrpcStatus.OK);
      ExportLogsServiceResponse response = answer.response();
      assertThat(response.getPartialSuccess().getRejectedLogRecords())
          .as("records the standby did not apply: %s", response.getPartialSuccess())
          .isZero();
    }
    assertThat(applied(leader)).as("records the leader applied").isEqualTo(before + ERRORS);
    assertThat(applied(standby)).as("records the standby applied").isZero();
    await().atMost(Duration.ofSeconds(10)).until(() -> state(i) == BackendState.EJECTED);
  }

  @Test
  void aBatchAndAnExportSentToTheStandbyAreAppliedByTheLeaderAtTheFirstRequest() throws Exception {
    MockCluster.Replica a = start("replica-a");
    await().atMost(Duration.ofSeconds(15)).until(() -> "replica-a".equals(holder()));
    MockCluster.Replica b = start("replica-b");
    assertThat(leaderReady()).isEqualTo("replica-a");

    batchThroughStandby(b, a, 0);
    exportThroughStandby(b, a, 1);
    assertThat(counter(b, "vigil_outcomes_forwarded_total"))
        .as("outcomes the standby forwarded")
        .isEqualTo(2 * ERRORS);
    assertThat(state(2)).isEqualTo(BackendState.UP);
    assertThat(state(3)).isEqualTo(BackendState.UP);
  }

  @Test
  void afterTheLeaderStopsTheStandbyForwardsToTheNewLeader() throws Exception {
    MockCluster.Replica a = start("replica-a");
    await().atMost(Duration.ofSeconds(15)).until(() -> "replica-a".equals(holder()));
    start("replica-b");
    start("replica-c");
    assertThat(leaderReady()).isEqualTo("replica-a");

    cluster.stop(a);
    replicas.remove("replica-a");
    String next = leaderReady();
    MockCluster.Replica leader = replicas.get(next);
    MockCluster.Replica standby =
        replicas.values().stream().filter(r -> r != leader).findFirst().orElseThrow();

    batchThroughStandby(standby, leader, 0);
    exportThroughStandby(standby, leader, 1);
    assertThat(state(2)).isEqualTo(BackendState.UP);
  }
}
