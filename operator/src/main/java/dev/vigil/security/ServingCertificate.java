package dev.vigil.security;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.ServerSSLOptions;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A server's certificate and key, read from PEM files (a {@code kubernetes.io/tls} Secret mounted
 * as a volume) and re-read every {@code checkEveryMs} ({@link WatchedFiles}): when either file
 * changed, every server given to {@link #serve} gets the new pair through Vert.x's {@code
 * updateSSLOptions}, so a rotated Secret takes effect for new connections without a restart. A pair
 * that does not load (a half written rotation) is logged and the old one kept; the next check tries
 * again.
 */
public final class ServingCertificate implements AutoCloseable {
  private final Map<HttpServer, ServerSSLOptions> servers = new ConcurrentHashMap<>();
  private final WatchedFiles files;

  public ServingCertificate(Vertx vertx, Path certFile, Path keyFile) {
    this.files =
        new WatchedFiles(vertx, List.of(certFile, keyFile), "TLS certificate or key", this::rotate);
  }

  /** The pair as read last, for a server's first options. */
  public PemKeyCertOptions options() {
    return pem(files.current());
  }

  /** The certificate (PEM) as read last. */
  public byte[] certificate() {
    return files.current().get(0).clone();
  }

  /** Hands rotations to this server from now on. */
  public void serve(HttpServer server) {
    serve(server, new ServerSSLOptions());
  }

  /**
   * Hands rotations to this server from now on, each with the rest of {@code kept} (what the
   * server's TLS keeps across rotations: client authentication and whom it trusts for it). Vert.x
   * replaces a server's whole TLS setting on an update, so what is not passed again is lost.
   */
  public void serve(HttpServer server, ServerSSLOptions kept) {
    servers.put(server, kept.copy());
  }

  /** Starts checking the files; returns this. */
  public ServingCertificate checkEvery(long ms) {
    files.checkEvery(ms);
    return this;
  }

  /** Reads both files once; when they changed, updates every server. Completes true on a change. */
  public Future<Boolean> check() {
    return files.check();
  }

  private Future<Void> rotate(List<byte[]> read) {
    PemKeyCertOptions pair = pem(read);
    List<Future<Boolean>> updates =
        servers.entrySet().stream()
            .map(e -> e.getKey().updateSSLOptions(e.getValue().copy().setKeyCertOptions(pair)))
            .toList();
    return Future.all(updates).mapEmpty();
  }

  private static PemKeyCertOptions pem(List<byte[]> pair) {
    return new PemKeyCertOptions()
        .setCertValue(Buffer.buffer(pair.get(0)))
        .setKeyValue(Buffer.buffer(pair.get(1)));
  }

  @Override
  public void close() {
    files.close();
  }
}
