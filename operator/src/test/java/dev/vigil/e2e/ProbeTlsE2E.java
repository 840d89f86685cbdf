package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.ConfigMapKeyRef;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Protocol;
import dev.vigil.api.v1alpha1.SecretRef;
import dev.vigil.api.v1alpha1.TlsCaBundle;
import dev.vigil.api.v1alpha1.TlsClientCertificate;
import dev.vigil.api.v1alpha1.TlsConfig;
import dev.vigil.reconcile.ProbeTlsObjects;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 35 item 2 on the real control plane, the operator in-process as the chart's ServiceAccount
 * (so the chart's RBAC, with its label-gated Secret grant, checks every call): a backend whose
 * certificate a private CA signed is verified with the CA bundle and refused without it ("unknown
 * CA"); an mTLS backend ({@code e2e/backend.py} with a client CA) refuses a probe without the
 * client certificate ("client certificate required") and accepts one with it; the client Secret
 * rotated to a certificate the backend rejects, and back, is used within a minute, without a
 * restart.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ProbeTlsE2E {
  private static final int PORT = 8443;
  private static final String NAME = "backend.test";
  private static final Duration CONVERGE = Duration.ofSeconds(60);
  private static final Duration ROTATION = Duration.ofMinutes(1);
  private static E2eCluster cluster;

  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "ptls", PORT);
  @AutoClose private final HostBackends backends = new HostBackends(cluster);
  private final String ns = bed.ns();
  private final KubernetesClient admin = cluster.admin();
  private final CertificateAuthority serverCa = new CertificateAuthority("e2e-backend-ca");
  private final CertificateAuthority clientCa = new CertificateAuthority("e2e-probe-ca");

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.withChart();
  }

  @Test
  void privateCaAndMtlsBackendsAndARotatedSecretWithinAMinute() throws IOException {
    Path dir = Files.createTempDirectory("vigil-e2e-probe-tls");
    serverCa.issue(NAME, List.of(NAME), Duration.ofDays(1)).writeTo(dir);
    Files.writeString(dir.resolve("client-ca.crt"), clientCa.caPem());
    String cert = dir.resolve("tls.crt").toString();
    String key = dir.resolve("tls.key").toString();
    backends.start(
        "private-ca",
        1,
        TestHosts.address(1),
        PORT,
        "healthy",
        Map.of("BACKEND_TLS_CERT", cert, "BACKEND_TLS_KEY", key));
    backends.start(
        "mtls",
        2,
        TestHosts.address(2),
        PORT,
        "healthy",
        Map.of(
            "BACKEND_TLS_CERT",
            cert,
            "BACKEND_TLS_KEY",
            key,
            "BACKEND_TLS_CLIENT_CA",
            dir.resolve("client-ca.crt").toString()));
    cluster.createRunningPod(ns, "private-ca-0", "private-ca", TestHosts.address(1));
    cluster.createRunningPod(ns, "mtls-0", "mtls", TestHosts.address(2));
    admin
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("backend-ca")
                .withNamespace(ns)
                .withLabels(Map.of(ProbeTlsObjects.LABEL, "true"))
                .endMetadata()
                .withData(Map.of("ca.crt", serverCa.caPem()))
                .build())
        .create();
    admin.resource(secret(clientCa.issueClient("vigil-probe", Duration.ofDays(1)))).create();
    pool("verified", "private-ca", true, false);
    pool("unverified", "private-ca", false, false);
    pool("mtls", "mtls", true, true);
    pool("no-client-cert", "mtls", true, false);
    bed.started(InProcessOperator.start(cluster, ns, null));

    String ca = TestHosts.address(1);
    String mtls = TestHosts.address(2);
    awaitReady("verified", Set.of(ca));
    awaitReady("mtls", Set.of(mtls));
    awaitDetail("unverified", "unknown CA");
    awaitDetail("no-client-cert", "client certificate required");
    assertThat(slices("unverified").readyIps()).isEmpty();
    assertThat(slices("no-client-cert").readyIps()).isEmpty();

    long rotated = System.nanoTime();
    CertificateAuthority stranger = new CertificateAuthority("e2e-stranger");
    admin.resource(secret(stranger.issueClient("vigil-probe", Duration.ofDays(1)))).update();
    await()
        .atMost(ROTATION)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> slices("mtls").readyIps().isEmpty());
    long refusedMs = (System.nanoTime() - rotated) / 1_000_000;
    awaitDetail("mtls", "client certificate");

    rotated = System.nanoTime();
    admin.resource(secret(clientCa.issueClient("vigil-probe", Duration.ofDays(1)))).update();
    await()
        .atMost(ROTATION)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> slices("mtls").readyIps().equals(Set.of(mtls)));
    long acceptedMs = (System.nanoTime() - rotated) / 1_000_000;
    System.out.printf(
        "probe TLS: rotated Secret to a rejected certificate -> Down in %d ms, back to an accepted"
            + " one -> Up in %d ms (bound 60000 ms)%n",
        refusedMs, acceptedMs);
  }

  private void pool(String name, String app, boolean bundle, boolean clientCert) {
    HealthPolicy p = Fixtures.policy(ns, name, "500ms", "400ms");
    p.getSpec().setPanicThresholdPercent(0); // one backend per pool: its Down must show
    p.getSpec().getActive().setProtocol(Protocol.HTTPS);
    TlsConfig tls = new TlsConfig();
    tls.setServerName(NAME);
    if (bundle) {
      tls.setCaBundle(new TlsCaBundle(new ConfigMapKeyRef("backend-ca", null)));
    }
    if (clientCert) {
      tls.setClientCertificate(new TlsClientCertificate(new SecretRef("probe-cert")));
    }
    p.getSpec().getActive().setTls(tls);
    admin.resource(p).create();
    admin.resource(Fixtures.pool(ns, name, name, app, PORT)).create();
  }

  private Secret secret(CertificateAuthority.Issued cert) {
    return Fixtures.probeTlsSecret(ns, "probe-cert", cert.certPem(), cert.keyPem());
  }

  private PublishedSlices slices(String service) {
    return new PublishedSlices(admin, ns, service);
  }

  private void awaitReady(String pool, Set<String> ips) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> slices(pool).readyIps().equals(ips));
  }

  private void awaitDetail(String pool, String detail) {
    await()
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> lastDetail(pool).contains(detail));
  }

  private String lastDetail(String pool) {
    BackendPool p = admin.resources(BackendPool.class).inNamespace(ns).withName(pool).get();
    if (p == null || p.getStatus() == null || p.getStatus().getBackends() == null) {
      return "";
    }
    return p.getStatus().getBackends().stream()
        .filter(b -> b.getLastProbe() != null && b.getLastProbe().getDetail() != null)
        .map(b -> b.getLastProbe().getDetail())
        .findFirst()
        .orElse("");
  }
}
