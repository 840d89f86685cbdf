package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.ConfigMapKeyRef;
import dev.vigil.api.v1alpha1.TlsConfig;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.probe.TlsMaterial;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Map;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;

/**
 * Reads a policy's {@code active.tls.caBundle} and {@code clientCertificate} from the ConfigMap and
 * Secret they name into a {@link TlsMaterial}, checking the PEM. Every error names the field (for
 * example {@code active.tls.caBundle.configMapRef.name}) and what to do.
 */
final class ProbeTlsMaterial {
  static final String CA_FIELD = "active.tls.caBundle.configMapRef";
  static final String CERT_FIELD = "active.tls.clientCertificate.secretRef";

  private ProbeTlsMaterial() {}

  /**
   * @throws InvalidSettingsException naming the field of a missing object, key or bad PEM
   */
  static TlsMaterial read(String namespace, TlsConfig tls, ProbeTlsObjects objects) {
    if (tls == null || (tls.getCaBundle() == null && tls.getClientCertificate() == null)) {
      return TlsMaterial.NONE;
    }
    String ca = tls.getCaBundle() == null ? null : caBundle(namespace, tls, objects);
    String cert = null;
    String key = null;
    if (tls.getClientCertificate() != null) {
      Map<String, String> data = secret(namespace, tls, objects);
      cert = data.get("tls.crt");
      key = data.get("tls.key");
      String name = tls.getClientCertificate().getSecretRef().getName();
      if (cert == null || cert.isBlank()) {
        throw new InvalidSettingsException(
            CERT_FIELD + ".name", "Secret " + name + " has no key tls.crt");
      }
      if (key == null || key.isBlank()) {
        throw new InvalidSettingsException(
            CERT_FIELD + ".name", "Secret " + name + " has no key tls.key");
      }
      certificates(CERT_FIELD + ".name", "tls.crt of Secret " + name, cert);
      privateKey(CERT_FIELD + ".name", "tls.key of Secret " + name, key);
    }
    return new TlsMaterial(ca, cert, key);
  }

  private static String caBundle(String namespace, TlsConfig tls, ProbeTlsObjects objects) {
    ConfigMapKeyRef ref = tls.getCaBundle().getConfigMapRef();
    if (ref == null || ref.getName() == null || ref.getName().isEmpty()) {
      throw new InvalidSettingsException(CA_FIELD + ".name", "required");
    }
    String key = ref.getKey() == null || ref.getKey().isEmpty() ? "ca.crt" : ref.getKey();
    Map<String, String> data = objects.configMap(namespace, ref.getName());
    if (data == null) {
      throw new InvalidSettingsException(
          CA_FIELD + ".name",
          "ConfigMap "
              + ref.getName()
              + " not found in namespace "
              + namespace
              + " (Vigil reads only ConfigMaps labelled "
              + ProbeTlsObjects.LABEL
              + "=true)");
    }
    String pem = data.get(key);
    if (pem == null || pem.isBlank()) {
      throw new InvalidSettingsException(
          CA_FIELD + ".key", "ConfigMap " + ref.getName() + " has no key " + key);
    }
    certificates(CA_FIELD + ".key", key + " of ConfigMap " + ref.getName(), pem);
    return pem;
  }

  private static Map<String, String> secret(
      String namespace, TlsConfig tls, ProbeTlsObjects objects) {
    if (tls.getClientCertificate().getSecretRef() == null
        || tls.getClientCertificate().getSecretRef().getName() == null
        || tls.getClientCertificate().getSecretRef().getName().isEmpty()) {
      throw new InvalidSettingsException(CERT_FIELD + ".name", "required");
    }
    String name = tls.getClientCertificate().getSecretRef().getName();
    if (!objects.secretsReadable()) {
      throw new InvalidSettingsException(
          CERT_FIELD + ".name",
          "this Vigil does not read Secrets (its admin turned it off: chart value"
              + " probeTls.readSecrets=false, flag --probe-tls-secrets=false), so Secret "
              + name
              + " cannot be used; ask the admin, or remove clientCertificate");
    }
    Map<String, String> data = objects.secret(namespace, name);
    if (data == null) {
      throw new InvalidSettingsException(
          CERT_FIELD + ".name",
          "Secret "
              + name
              + " not found in namespace "
              + namespace
              + " (Vigil reads only Secrets labelled "
              + ProbeTlsObjects.LABEL
              + "=true)");
    }
    return data;
  }

  /** At least one X.509 certificate, else an error naming {@code field}. */
  private static void certificates(String field, String what, String pem) {
    try {
      if (CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
          .isEmpty()) {
        throw new InvalidSettingsException(field, what + " holds no PEM certificate");
      }
    } catch (CertificateException e) {
      throw new InvalidSettingsException(
          field, what + " is not PEM certificates: " + e.getMessage());
    }
  }

  /** A PEM private key (PKCS#8, or PKCS#1 / SEC1 key pair), else an error naming {@code field}. */
  private static void privateKey(String field, String what, String pem) {
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      Object parsed = parser.readObject();
      if (!(parsed instanceof PrivateKeyInfo) && !(parsed instanceof PEMKeyPair)) {
        throw new InvalidSettingsException(
            field, what + " is not an unencrypted PEM private key (PKCS#8, PKCS#1 or EC)");
      }
    } catch (IOException e) {
      throw new InvalidSettingsException(
          field, what + " is not a PEM private key: " + e.getMessage());
    }
  }
}
