package dev.vigil.probe;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The PEM a probe's TLS uses beyond the JVM's defaults: the CA certificates to trust ({@code
 * active.tls.caBundle}) and a client certificate with its key ({@code
 * active.tls.clientCertificate}). Equal by content, so pools whose policies name the same bundle
 * and certificate share one TLS context, and a rotated Secret is a new value.
 *
 * @param caPem PEM CA certificates; null = the JVM's trust store
 * @param certPem PEM client certificate chain; null = no client certificate
 * @param keyPem PEM private key of {@code certPem}; null exactly when {@code certPem} is
 */
public record TlsMaterial(String caPem, String certPem, String keyPem) {
  /** Nothing beyond the JVM's defaults. */
  public static final TlsMaterial NONE = new TlsMaterial(null, null, null);

  public TlsMaterial {
    if ((certPem == null) != (keyPem == null)) {
      throw new IllegalArgumentException(
          "active.tls.clientCertificate: a certificate needs its key");
    }
  }

  public boolean hasCa() {
    return caPem != null;
  }

  public boolean hasClientCertificate() {
    return certPem != null;
  }

  /**
   * A number that changes with the content (the first 8 bytes of a SHA-256 over it); 0 for {@link
   * #NONE}. Runtimes restart their probes when a policy's version moves: this moves it on rotation.
   */
  public long fingerprint() {
    if (equals(NONE)) {
      return 0;
    }
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (String part : new String[] {caPem, certPem, keyPem}) {
        sha.update(part == null ? new byte[] {0} : part.getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0xff);
      }
      byte[] d = sha.digest();
      long v = 0;
      for (int i = 0; i < 8; i++) {
        v = (v << 8) | (d[i] & 0xff);
      }
      return v == 0 ? 1 : v;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JVM", e);
    }
  }

  @Override
  public String toString() {
    // never the key
    return "TlsMaterial[ca=" + hasCa() + ", clientCertificate=" + hasClientCertificate() + "]";
  }
}
