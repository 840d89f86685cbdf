package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.passive.OutcomeIntake;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.testing.TestTls;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The secure endpoints on the real control plane, with the operator in-process as the chart's
 * ServiceAccount: /metrics answers 401 without a token, 403 to a ServiceAccount without the chart's
 * vigil-metrics-reader ClusterRole and 200 to one bound to it (real TokenReview and
 * SubjectAccessReview for the non-resource URL); the outcome port's certificate files are replaced
 * and new connections see the new certificate within 60 s, without a restart.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SecureEndpointsE2E {
  private static E2eCluster cluster;
  private final HttpClient http = TestTls.client();
  @AutoClose private final ChartTestBed bed = ChartTestBed.open(cluster, "secure", 8080);
  private final String ns = bed.ns();
  private InProcessOperator operator;
  @TempDir Path tls;

  @BeforeAll
  static void chart() {
    cluster = E2eCluster.withChart();
  }

  private HttpResponse<String> metrics(String token) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + operator.metricsPort() + "/metrics"))
            .timeout(Duration.ofSeconds(30));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void metricsNeedTheMetricsReaderRoleAndTheCertificateRotatesWithoutARestart() throws Exception {
    CertificateAuthority.Issued first =
        TestTls.ca().issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1));
    first.writeTo(tls);
    for (String sa : List.of("scraper", "nosy")) {
      cluster.serviceAccount(ns, sa);
    }
    cluster.bindClusterRole(ns + "-scraper", "vigil-metrics-reader", ns, "scraper");
    try {
      operator = bed.started(InProcessOperator.startSecure(cluster, ns, tls));

      assertThat(metrics(null).statusCode()).isEqualTo(401);
      assertThat(metrics(cluster.token(ns, "nosy")).statusCode()).isEqualTo(403);
      HttpResponse<String> scraped = metrics(cluster.token(ns, "scraper"));
      assertThat(scraped.statusCode()).as(scraped.body()).isEqualTo(200);
      assertThat(scraped.body()).contains("vigil_");
      HttpResponse<String> health =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("https://127.0.0.1:" + operator.metricsPort() + "/healthz"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).as("no token needed").isEqualTo(200);
      HttpResponse<String> probe =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + operator.healthPort() + "/readyz"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(probe.statusCode())
          .as("the kubelet's probe: plain HTTP on the health port, no token: %s", probe.body())
          .isEqualTo(200);

      int port = operator.outcomePort();
      assertThat(servedSerial(port)).isEqualTo(first.serial());
      CertificateAuthority.Issued second =
          TestTls.ca().issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1));
      // As the kubelet updates a Secret volume: both files at once, by renaming.
      Path next = Files.createDirectories(tls.resolve("next"));
      second.writeTo(next);
      Files.move(
          next.resolve("tls.key"),
          tls.resolve("tls.key"),
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      Files.move(
          next.resolve("tls.crt"),
          tls.resolve("tls.crt"),
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      long replaced = System.nanoTime();
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> servedSerial(port).equals(second.serial()));
      System.out.printf(
          "SecureEndpointsE2E: new certificate served %d ms after the files were replaced%n",
          (System.nanoTime() - replaced) / 1_000_000);
      HttpResponse<String> afterRotation =
          http.send(
              HttpRequest.newBuilder(
                      URI.create(
                          "https://127.0.0.1:" + port + OutcomeIntake.path(ns, "nothing-here")))
                  .header("Authorization", "Bearer x")
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("[]"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(afterRotation.statusCode()).as("the same process still answers").isEqualTo(401);
    } finally {
      cluster.admin().rbac().clusterRoleBindings().withName(ns + "-scraper").delete();
    }
  }

  private static BigInteger servedSerial(int port) throws Exception {
    try (SSLSocket s = TestTls.socket(port)) {
      return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }
}
