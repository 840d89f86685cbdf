package dev.vigil.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The identity a client certificate carries, and a bundle that does not load at start. */
class ClientCertificatesTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void tearDown() {
    vertx.close();
  }

  @Test
  void theCnIsTheUserAndEveryOIsAGroupAsKubernetesMapsThem() throws Exception {
    CertificateAuthority ca = new CertificateAuthority("exporters-ca");
    X509Certificate cert =
        parse(ca.issueClient("envoy", List.of("vigil:exporters", "edge"), Duration.ofHours(1)));

    Identity who = ClientCertificates.identity(cert);

    assertThat(who.username()).isEqualTo("envoy");
    assertThat(who.groups())
        .containsExactly("vigil:exporters", "edge", ClientCertificates.AUTHENTICATED);
    assertThat(who.uid()).isNull();
    assertThat(who.extra()).isEmpty();
  }

  @Test
  void aBundleThatDoesNotLoadStopsTheStartNamingTheFlagAndTheFile(@TempDir Path dir)
      throws Exception {
    Path missing = dir.resolve("missing.crt");
    assertThatThrownBy(() -> new ClientCertificates(vertx, missing, System::currentTimeMillis))
        .hasMessageContaining("--intake-client-ca")
        .hasMessageContaining(missing.toString());

    Path empty = dir.resolve("empty.crt");
    Files.writeString(empty, "# no certificate here\n");
    assertThatThrownBy(() -> new ClientCertificates(vertx, empty, System::currentTimeMillis))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--intake-client-ca " + empty);
  }

  private static X509Certificate parse(CertificateAuthority.Issued issued) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new ByteArrayInputStream(issued.certPem().getBytes(StandardCharsets.US_ASCII)));
  }
}
