package dev.vigil.security;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.ServerSSLOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's certificate and key, read from PEM files (a {@code kubernetes.io/tls} Secret mounted
 * as a volume) and re-read every {@code checkEveryMs}: when either file changed, every server given
 * to {@link #serve} gets the new pair through Vert.x's {@code updateSSLOptions}, so a rotated
 * Secret takes effect for new connections without a restart. A pair that does not load (a half
 * written rotation) is logged and the old one kept; the next check tries again.
 */
public final class ServingCertificate implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ServingCertificate.class);

  private final Vertx vertx;
  private final Path certFile;
  private final Path keyFile;
  private final List<HttpServer> servers = new CopyOnWriteArrayList<>();
  private volatile byte[] cert;
  private volatile byte[] key;
  private long timer = -1;

  public ServingCertificate(Vertx vertx, Path certFile, Path keyFile) {
    this.vertx = vertx;
    this.certFile = certFile;
    this.keyFile = keyFile;
    try {
      this.cert = Files.readAllBytes(certFile);
      this.key = Files.readAllBytes(keyFile);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the TLS certificate or key: " + e, e);
    }
  }

  /** The pair as read last, for a server's first options. */
  public PemKeyCertOptions options() {
    return new PemKeyCertOptions()
        .setCertValue(Buffer.buffer(cert))
        .setKeyValue(Buffer.buffer(key));
  }

  /** The certificate (PEM) as read last. */
  public byte[] certificate() {
    return cert.clone();
  }

  /** Hands rotations to this server from now on. */
  public void serve(HttpServer server) {
    servers.add(server);
  }

  /** Starts checking the files; returns this. */
  public ServingCertificate checkEvery(long ms) {
    timer = vertx.setPeriodic(ms, id -> check());
    return this;
  }

  /** Reads both files once; when they changed, updates every server. Completes true on a change. */
  public Future<Boolean> check() {
    return vertx
        .executeBlocking(
            () -> new byte[][] {Files.readAllBytes(certFile), Files.readAllBytes(keyFile)})
        .compose(
            read -> {
              if (Arrays.equals(read[0], cert) && Arrays.equals(read[1], key)) {
                return Future.succeededFuture(false);
              }
              ServerSSLOptions ssl =
                  new ServerSSLOptions()
                      .setKeyCertOptions(
                          new PemKeyCertOptions()
                              .setCertValue(Buffer.buffer(read[0]))
                              .setKeyValue(Buffer.buffer(read[1])));
              List<Future<Boolean>> updates =
                  servers.stream().map(s -> s.updateSSLOptions(ssl)).toList();
              return Future.all(updates)
                  .map(
                      v -> {
                        cert = read[0];
                        key = read[1];
                        LOG.info("serving the rotated certificate from {}", certFile);
                        return true;
                      });
            })
        .recover(
            e -> {
              LOG.warn(
                  "keeping the current certificate: {} did not load: {}", certFile, e.toString());
              return Future.succeededFuture(false);
            });
  }

  @Override
  public void close() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }
}
