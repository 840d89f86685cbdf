package dev.vigil.demo;

import dev.vigil.security.CertificateAuthority;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The outcome port's TLS files in a temporary directory: a CA of the demo's own (the chart's genCA)
 * signs a serving certificate for {@code localhost}, and reporters trust that CA. The files are
 * removed with {@link #delete()} when the demo ends.
 */
final class DemoTls {
  private final Path dir;
  private final String caPem;

  private DemoTls(Path dir, String caPem) {
    this.dir = dir;
    this.caPem = caPem;
  }

  /**
   * Makes the CA, issues the serving certificate and writes {@code tls.crt}, {@code tls.key},
   * {@code ca.crt}.
   */
  static DemoTls create() {
    try {
      Path dir = Files.createTempDirectory("vigil-demo-tls");
      CertificateAuthority ca = new CertificateAuthority("vigil-demo-ca");
      ca.issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofDays(1)).writeTo(dir);
      DemoTls tls = new DemoTls(dir, ca.caPem());
      Files.writeString(tls.caFile(), tls.caPem);
      return tls;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Path certFile() {
    return dir.resolve("tls.crt");
  }

  Path keyFile() {
    return dir.resolve("tls.key");
  }

  /** The CA bundle as a file, for a reporter of one's own ({@code curl --cacert}). */
  Path caFile() {
    return dir.resolve("ca.crt");
  }

  /** The CA bundle reporters trust for the outcome port (PEM). */
  String caPem() {
    return caPem;
  }

  /** Removes the files and their directory; best effort, as for any temporary directory. */
  void delete() {
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // best effort: a temporary directory
    }
  }
}
