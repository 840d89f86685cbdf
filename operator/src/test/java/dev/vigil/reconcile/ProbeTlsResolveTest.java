package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.api.v1alpha1.ConfigMapKeyRef;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Protocol;
import dev.vigil.api.v1alpha1.SecretRef;
import dev.vigil.api.v1alpha1.TlsCaBundle;
import dev.vigil.api.v1alpha1.TlsClientCertificate;
import dev.vigil.api.v1alpha1.TlsConfig;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.testing.Fixtures;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code active.tls.caBundle} and {@code clientCertificate} resolve from the labelled ConfigMap and
 * Secret; anything missing or not PEM is refused naming the field; the version follows the content.
 */
class ProbeTlsResolveTest {
  static final CertificateAuthority CA = new CertificateAuthority("resolve-ca");
  static final CertificateAuthority.Issued CLIENT = CA.issueClient("probe", Duration.ofDays(1));

  final Map<String, Map<String, String>> configMaps = new HashMap<>();
  final Map<String, Map<String, String>> secrets = new HashMap<>();
  boolean secretsReadable = true;

  final ProbeTlsObjects objects =
      new ProbeTlsObjects() {
        @Override
        public Map<String, String> configMap(String namespace, String name) {
          return configMaps.get(namespace + "/" + name);
        }

        @Override
        public Map<String, String> secret(String namespace, String name) {
          return secrets.get(namespace + "/" + name);
        }

        @Override
        public boolean secretsReadable() {
          return secretsReadable;
        }
      };

  static HealthPolicy policy(boolean ca, boolean client) {
    HealthPolicy p = Fixtures.policy("shop", "tls", "1s", "500ms");
    p.getSpec().getActive().setProtocol(Protocol.HTTPS);
    TlsConfig tls = new TlsConfig();
    if (ca) {
      tls.setCaBundle(new TlsCaBundle(new ConfigMapKeyRef("backend-ca", null)));
    }
    if (client) {
      tls.setClientCertificate(new TlsClientCertificate(new SecretRef("probe-cert")));
    }
    p.getSpec().getActive().setTls(tls);
    return p;
  }

  ResolvedPolicy resolve(HealthPolicy p) {
    return PolicyResolver.resolve(p, TenantFloors.NONE, objects);
  }

  void present() {
    configMaps.put("shop/backend-ca", Map.of("ca.crt", CA.caPem()));
    secrets.put("shop/probe-cert", Map.of("tls.crt", CLIENT.certPem(), "tls.key", CLIENT.keyPem()));
  }

  @Test
  void theBundleAndTheClientCertificateReachTheCheck() {
    present();
    ResolvedPolicy r = resolve(policy(true, true));
    assertThat(r.check().tls().material().caPem()).isEqualTo(CA.caPem());
    assertThat(r.check().tls().material().certPem()).isEqualTo(CLIENT.certPem());
    assertThat(r.check().tls().material().keyPem()).isEqualTo(CLIENT.keyPem());
    assertThat(r.check().usesTls()).isTrue();
  }

  @Test
  void aRotatedSecretMovesTheVersionAndAnUnchangedOneDoesNot() {
    present();
    long before = resolve(policy(true, true)).version();
    assertThat(resolve(policy(true, true)).version()).isEqualTo(before);
    CertificateAuthority.Issued next = CA.issueClient("probe", Duration.ofDays(1));
    secrets.put("shop/probe-cert", Map.of("tls.crt", next.certPem(), "tls.key", next.keyPem()));
    assertThat(resolve(policy(true, true)).version()).isNotEqualTo(before);
  }

  @Test
  void aMissingConfigMapNamesTheField() {
    assertThatThrownBy(() -> resolve(policy(true, false)))
        .isInstanceOf(InvalidSettingsException.class)
        .hasMessageStartingWith("active.tls.caBundle.configMapRef.name: ConfigMap backend-ca")
        .hasMessageContaining("vigil.dev/probe-tls=true");
  }

  @Test
  void aMissingKeyOrABadPemNamesTheKey() {
    configMaps.put("shop/backend-ca", Map.of("other", CA.caPem()));
    assertThatThrownBy(() -> resolve(policy(true, false)))
        .hasMessageStartingWith("active.tls.caBundle.configMapRef.key:")
        .hasMessageContaining("no key ca.crt");
    configMaps.put("shop/backend-ca", Map.of("ca.crt", "not a certificate"));
    assertThatThrownBy(() -> resolve(policy(true, false)))
        .hasMessageStartingWith("active.tls.caBundle.configMapRef.key:");
  }

  @Test
  void aMissingSecretOrKeyOrABadKeyNamesTheSecret() {
    assertThatThrownBy(() -> resolve(policy(false, true)))
        .hasMessageStartingWith("active.tls.clientCertificate.secretRef.name: Secret probe-cert");
    secrets.put("shop/probe-cert", Map.of("tls.crt", CLIENT.certPem()));
    assertThatThrownBy(() -> resolve(policy(false, true))).hasMessageContaining("no key tls.key");
    secrets.put("shop/probe-cert", Map.of("tls.crt", CLIENT.certPem(), "tls.key", "garbage"));
    assertThatThrownBy(() -> resolve(policy(false, true)))
        .hasMessageStartingWith("active.tls.clientCertificate.secretRef.name:")
        .hasMessageContaining("private key");
  }

  @Test
  void withSecretReadingOffAPolicyNamingASecretIsRefused() {
    present();
    secretsReadable = false;
    assertThatThrownBy(() -> resolve(policy(true, true)))
        .hasMessageStartingWith("active.tls.clientCertificate.secretRef.name:")
        .hasMessageContaining("does not read Secrets");
  }

  @Test
  void aPolicyWithoutReferencesNeedsNoObjects() {
    ResolvedPolicy r = PolicyResolver.resolve(policy(false, false), TenantFloors.NONE, objects);
    assertThat(r.check().tls().hasMaterial()).isFalse();
    assertThat(r.version()).isZero(); // the generation (none here): no material, no change
  }
}
