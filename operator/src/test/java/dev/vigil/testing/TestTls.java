package dev.vigil.testing;

import dev.vigil.security.CertificateAuthority;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * One test CA per JVM and a serving certificate for localhost and 127.0.0.1 it signed, as PEM files
 * ({@code tls.crt}, {@code tls.key}), with clients that trust only that CA.
 */
public final class TestTls {
  private static final CertificateAuthority CA = new CertificateAuthority("vigil-test-ca");
  private static final Path DIR = issue();

  private TestTls() {}

  private static Path issue() {
    try {
      return CA.issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofDays(1))
          .writeTo(Files.createTempDirectory("vigil-test-tls"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static CertificateAuthority ca() {
    return CA;
  }

  public static Path certFile() {
    return DIR.resolve("tls.crt");
  }

  public static Path keyFile() {
    return DIR.resolve("tls.key");
  }

  /** The test CA's certificate as a PEM file (what reporters pass as their CA bundle). */
  public static synchronized Path caFile() {
    Path file = DIR.resolve("ca.crt");
    try {
      if (!Files.exists(file)) {
        Files.writeString(file, CA.caPem());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }

  public static SSLContext trusting() {
    return CertificateAuthority.trusting(CA.caPem());
  }

  /** An HTTP/1.1 client that trusts the test CA only. */
  public static HttpClient client() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .sslContext(trusting())
        .build();
  }

  /** A TLS socket to a loopback port, handshake done. */
  public static SSLSocket socket(int port) throws IOException {
    SSLSocket s = (SSLSocket) trusting().getSocketFactory().createSocket("127.0.0.1", port);
    s.setSoTimeout(5_000);
    s.startHandshake();
    return s;
  }
}
