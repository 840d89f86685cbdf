package dev.vigil.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway certificate authority that issues serving certificates as PEM: what the chart's
 * {@code genCA}/{@code genSignedCert} do, for the demo and the tests (in a cluster the certificate
 * comes from a Secret). RSA 2048, because every PEM reader (Vert.x's included) takes it.
 */
public final class CertificateAuthority {
  private final KeyPair keys;
  private final X509Certificate certificate;
  private final SecureRandom random = new SecureRandom();

  public CertificateAuthority(String commonName) {
    this.keys = rsa();
    this.certificate = sign(cn(commonName), keys, List.of(), null, Duration.ofDays(1));
  }

  /** The CA's certificate, as reporters trust it (the chart's "CA bundle"). */
  public String caPem() {
    return pem("CERTIFICATE", encoded(certificate));
  }

  /** A serving certificate for these DNS names and IP addresses, signed by this CA. */
  public Issued issue(String commonName, List<String> names, Duration validity) {
    return issue(cn(commonName), names, validity, KeyPurposeId.id_kp_serverAuth);
  }

  /** A client certificate (extended key usage clientAuth) for mutual TLS, signed by this CA. */
  public Issued issueClient(String commonName, Duration validity) {
    return issue(cn(commonName), List.of(commonName), validity, KeyPurposeId.id_kp_clientAuth);
  }

  /**
   * A client certificate for a user as Kubernetes maps one ({@code O=<group>, ..., CN=<user>}),
   * with no subject alternative names; a negative validity issues one that has expired.
   */
  public Issued issueClient(String user, List<String> groups, Duration validity) {
    X500NameBuilder subject = new X500NameBuilder(BCStyle.INSTANCE);
    groups.forEach(g -> subject.addRDN(BCStyle.O, g));
    subject.addRDN(BCStyle.CN, user);
    return issue(subject.build(), List.of(), validity, KeyPurposeId.id_kp_clientAuth);
  }

  private static X500Name cn(String commonName) {
    return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
  }

  private Issued issue(
      X500Name subjectName, List<String> names, Duration validity, KeyPurposeId purpose) {
    KeyPair serving = rsa();
    X509Certificate cert = sign(subjectName, serving, names, purpose, validity);
    return new Issued(
        pem("CERTIFICATE", encoded(cert)),
        pem("PRIVATE KEY", serving.getPrivate().getEncoded()),
        cert.getSerialNumber());
  }

  /** A serving certificate and its key as PEM text. */
  public record Issued(String certPem, String keyPem, BigInteger serial) {
    /** The certificate and key as a Vert.x server's key-cert options (no files). */
    public io.vertx.core.net.PemKeyCertOptions keyCertOptions() {
      return new io.vertx.core.net.PemKeyCertOptions()
          .setCertValue(io.vertx.core.buffer.Buffer.buffer(certPem))
          .setKeyValue(io.vertx.core.buffer.Buffer.buffer(keyPem));
    }

    /** Writes {@code tls.crt} and {@code tls.key} into the directory; returns it. */
    public Path writeTo(Path dir) {
      try {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("tls.crt"), certPem, StandardCharsets.US_ASCII);
        Files.writeString(dir.resolve("tls.key"), keyPem, StandardCharsets.US_ASCII);
        return dir;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** A TLS client context that trusts only the CA (or certificate) in this PEM text. */
  public static javax.net.ssl.SSLContext trusting(String caPem) {
    return trusting(caPem, null);
  }

  /**
   * A TLS client context that trusts only the CA (or certificate) in this PEM text and presents the
   * client certificate {@code key} chooses (null: none).
   */
  public static javax.net.ssl.SSLContext trusting(String caPem, javax.net.ssl.KeyManager key) {
    try {
      java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      int i = 0;
      for (java.security.cert.Certificate c :
          java.security.cert.CertificateFactory.getInstance("X.509")
              .generateCertificates(
                  new java.io.ByteArrayInputStream(caPem.getBytes(StandardCharsets.US_ASCII)))) {
        trust.setCertificateEntry("ca-" + i++, c);
      }
      javax.net.ssl.TrustManagerFactory tmf =
          javax.net.ssl.TrustManagerFactory.getInstance(
              javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
      context.init(
          key == null ? null : new javax.net.ssl.KeyManager[] {key}, tmf.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException("not a PEM certificate: " + e.getMessage(), e);
    }
  }

  private X509Certificate sign(
      X500Name subjectName,
      KeyPair subject,
      List<String> names,
      KeyPurposeId purpose,
      Duration validity) {
    boolean ca = purpose == null;
    Instant now = Instant.now();
    try {
      JcaX509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              ca ? subjectName : issuerName(),
              new BigInteger(64, random).abs().add(BigInteger.ONE),
              Date.from(now.minus(Duration.ofMinutes(5))),
              Date.from(now.plus(validity)),
              subjectName,
              subject.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
      if (ca) {
        b.addExtension(
            Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      } else {
        addLeafExtensions(b, names, purpose);
      }
      PrivateKey signer = ca ? subject.getPrivate() : keys.getPrivate();
      return new JcaX509CertificateConverter()
          .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withRSA").build(signer)));
    } catch (IOException | GeneralSecurityException | OperatorCreationException e) {
      throw new IllegalStateException("could not issue a certificate for " + subjectName, e);
    }
  }

  /** A leaf certificate's key usages and its names (IP addresses as such, others as DNS). */
  private static void addLeafExtensions(
      JcaX509v3CertificateBuilder b, List<String> names, KeyPurposeId purpose) throws IOException {
    b.addExtension(
        Extension.keyUsage,
        true,
        new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
    b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
    if (names.isEmpty()) {
      return;
    }
    List<GeneralName> alt = new ArrayList<>();
    for (String n : names) {
      alt.add(
          new GeneralName(
              n.chars().allMatch(c -> Character.isDigit(c) || c == '.' || c == ':')
                  ? GeneralName.iPAddress
                  : GeneralName.dNSName,
              n));
    }
    b.addExtension(
        Extension.subjectAlternativeName, false, new GeneralNames(alt.toArray(GeneralName[]::new)));
  }

  private X500Name issuerName() {
    return X500Name.getInstance(certificate.getSubjectX500Principal().getEncoded());
  }

  private static KeyPair rsa() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("RSA is missing", e);
    }
  }

  private static byte[] encoded(X509Certificate cert) {
    try {
      return cert.getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }
}
