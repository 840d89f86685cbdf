package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.ConfigMapKeyRef;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Protocol;
import dev.vigil.api.v1alpha1.SecretRef;
import dev.vigil.api.v1alpha1.TlsCaBundle;
import dev.vigil.api.v1alpha1.TlsClientCertificate;
import dev.vigil.api.v1alpha1.TlsConfig;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemTrustOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 2 on the Fabric8 mock API server (CRUD mode) with the real operator: a policy whose
 * {@code active.tls} names a CA bundle ConfigMap and a client certificate Secret probes a real mTLS
 * backend (Vert.x, {@code ClientAuth.REQUIRED}) Up; the Secret rotated to a certificate the backend
 * rejects takes it Down and back to an accepted one brings it Up, without a restart; a deleted
 * Secret leaves a condition naming the field and the slice as it was.
 */
class ProbeTlsIT {
  private static final String NS = "shop";
  private static final String HOST = "127.0.0.60";
  private static final String NAME = "backend.test";
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final CertificateAuthority serverCa = new CertificateAuthority("backend-ca");
  private final CertificateAuthority clientCa = new CertificateAuthority("probe-ca");

  @Test
  void aRotatedSecretIsUsedWithoutARestartAndAMissingOneHoldsTheSlice() {
    int port = mtlsBackend();
    client.resource(Fixtures.pod(NS, "web-0", "web", HOST)).create();
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("backend-ca")
                .withNamespace(NS)
                .withLabels(Map.of(ProbeTlsObjects.LABEL, "true"))
                .endMetadata()
                .withData(Map.of("ca.crt", serverCa.caPem()))
                .build())
        .create();
    client.resource(secret(clientCa.issueClient("vigil-probe", Duration.ofDays(1)))).create();
    client.resource(policy()).create();
    client.resource(Fixtures.pool(NS, "web", "tls", "web", port)).create();
    cluster.operator(MockCluster.config(NS));

    await().atMost(PATIENCE).until(() -> cluster.readyIps(NS).equals(Set.of(HOST)));

    // rotated to a certificate from a CA the backend does not trust: refused, Down
    CertificateAuthority stranger = new CertificateAuthority("stranger");
    client.resource(secret(stranger.issueClient("vigil-probe", Duration.ofDays(1)))).update();
    await().atMost(PATIENCE).until(() -> cluster.readyIps(NS).isEmpty());
    assertThat(lastProbeDetail()).contains("client certificate");

    // rotated to a new accepted certificate: Up again, same operator
    client.resource(secret(clientCa.issueClient("vigil-probe", Duration.ofDays(1)))).update();
    await().atMost(PATIENCE).until(() -> cluster.readyIps(NS).equals(Set.of(HOST)));

    // the Secret goes away: the policy and the pool say which field, the slice stays
    client.secrets().inNamespace(NS).withName("probe-cert").delete();
    String field = "active.tls.clientCertificate.secretRef.name";
    await()
        .atMost(PATIENCE)
        .until(() -> message(policyConditions(), Conditions.ACCEPTED).contains(field));
    await()
        .atMost(PATIENCE)
        .until(() -> message(poolConditions(), Conditions.READY).contains(field));
    assertThat(cluster.readyIps(NS)).isEqualTo(Set.of(HOST));
  }

  private int mtlsBackend() {
    CertificateAuthority.Issued serving = serverCa.issue(NAME, List.of(NAME), Duration.ofDays(1));
    HttpServer server =
        cluster
            .vertx()
            .createHttpServer(
                new HttpServerOptions()
                    .setHost(HOST)
                    .setPort(0)
                    .setSsl(true)
                    .setKeyCertOptions(serving.keyCertOptions())
                    .setClientAuth(ClientAuth.REQUIRED)
                    .setTrustOptions(
                        new PemTrustOptions().addCertValue(Buffer.buffer(clientCa.caPem()))))
            .requestHandler(r -> r.response().end("ok"));
    return server.listen().toCompletionStage().toCompletableFuture().join().actualPort();
  }

  private static Secret secret(CertificateAuthority.Issued cert) {
    return Fixtures.probeTlsSecret(NS, "probe-cert", cert.certPem(), cert.keyPem());
  }

  private static HealthPolicy policy() {
    HealthPolicy p = Fixtures.policy(NS, "tls", "200ms", "150ms");
    p.getSpec().setPanicThresholdPercent(0); // one backend: its Down must show, not panic
    p.getSpec().getActive().setProtocol(Protocol.HTTPS);
    TlsConfig tls = new TlsConfig();
    tls.setServerName(NAME);
    tls.setCaBundle(new TlsCaBundle(new ConfigMapKeyRef("backend-ca", null)));
    tls.setClientCertificate(new TlsClientCertificate(new SecretRef("probe-cert")));
    p.getSpec().getActive().setTls(tls);
    return p;
  }

  private String lastProbeDetail() {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName("web").get();
    if (p.getStatus() == null || p.getStatus().getBackends() == null) {
      return "";
    }
    return p.getStatus().getBackends().stream()
        .filter(b -> b.getLastProbe() != null)
        .map(b -> String.valueOf(b.getLastProbe().getDetail()))
        .findFirst()
        .orElse("");
  }

  private List<Condition> policyConditions() {
    HealthPolicy p = client.resources(HealthPolicy.class).inNamespace(NS).withName("tls").get();
    return p.getStatus() == null ? List.of() : p.getStatus().getConditions();
  }

  private List<Condition> poolConditions() {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName("web").get();
    return p.getStatus() == null ? List.of() : p.getStatus().getConditions();
  }

  private static String message(List<Condition> conditions, String type) {
    if (conditions == null) {
      return "";
    }
    return conditions.stream()
        .filter(c -> type.equals(c.getType()))
        .map(c -> String.valueOf(c.getMessage()))
        .findFirst()
        .orElse("");
  }
}
