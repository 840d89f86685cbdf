package dev.vigil.testing;

import dev.vigil.security.CertificateAuthority;
import io.vertx.core.net.KeyCertOptions;
import java.io.ByteArrayInputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A client certificate a test client presents whenever a server asks for one, whichever CAs the
 * server names (as Envoy does; a JDK or Go client would send none it does not find issued by them),
 * so a server sees certificates of other CAs too. Notes the CAs each request named.
 */
public final class PresentedCertificate extends X509ExtendedKeyManager {
  private static final String ALIAS = "client";

  private final X509Certificate[] chain;
  private final PrivateKey key;

  /** The CAs (subject names) each CertificateRequest named, in order of the handshakes. */
  public final List<List<String>> askedFor = new CopyOnWriteArrayList<>();

  public PresentedCertificate(CertificateAuthority.Issued issued) {
    try {
      this.chain =
          new X509Certificate[] {
            (X509Certificate)
                CertificateFactory.getInstance("X.509")
                    .generateCertificate(
                        new ByteArrayInputStream(
                            issued.certPem().getBytes(StandardCharsets.US_ASCII)))
          };
      String base64 =
          issued
              .keyPem()
              .replace("-----BEGIN PRIVATE KEY-----", "")
              .replace("-----END PRIVATE KEY-----", "")
              .replaceAll("\\s", "");
      this.key =
          KeyFactory.getInstance("RSA")
              .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
    } catch (Exception e) {
      throw new IllegalStateException("not a certificate and key: " + e, e);
    }
  }

  /** An HTTP/1.1 client that trusts the test CA ({@link TestTls}) and presents this certificate. */
  public HttpClient httpClient() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .sslContext(CertificateAuthority.trusting(TestTls.ca().caPem(), this))
        .build();
  }

  /** For a Vert.x client's options. */
  public KeyCertOptions keyCertOptions() {
    return KeyCertOptions.wrap(this);
  }

  private String asked(Principal[] issuers) {
    askedFor.add(
        issuers == null ? List.of() : Arrays.stream(issuers).map(Principal::getName).toList());
    return ALIAS;
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return asked(issuers);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return asked(issuers);
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return new String[] {ALIAS};
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return chain.clone();
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return key;
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return null;
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return null;
  }
}
