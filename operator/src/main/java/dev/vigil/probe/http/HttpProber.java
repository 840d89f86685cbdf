package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.transport.ProbeConnection;
import dev.vigil.probe.transport.SourceAddress;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * HTTP and HTTPS checks: one HTTP/1.1 request (with the optional {@code body}), the verdict from
 * the raw status line ({@link StatusLineClassifier}: pass, a fail-fast status, or a failure), then,
 * only when the status passes, {@code headerMatch} over the response headers and {@code bodyMatch}
 * over the first 64 KiB of the body. Headers are limited to 32 KiB, the body is never kept beyond
 * 64 KiB, and the whole probe (connect, TLS, request, response) has one deadline.
 *
 * <p>WebSocket checks ({@link ProbeProtocol#WEBSOCKET}) go the same way with an upgrade request (a
 * fresh random {@code Sec-WebSocket-Key} per probe): they pass on {@code 101} with {@code Upgrade:
 * websocket} and the {@code Sec-WebSocket-Accept} RFC 6455 derives from the key, then send a close
 * frame and close; the connection is never reused.
 *
 * <p>By default each probe opens a fresh connection ({@code Connection: close}) and closes it as
 * soon as the verdict is known, as HAProxy does. With {@code reuseConnection} one idle connection
 * per backend is kept when the response was cleanly framed, as Envoy does; a reused connection that
 * turns out to be closed before any byte of a response is retried once on a fresh one.
 *
 * <p>The exchange above is one implementation over a {@link ProbeConnection}: TLS checks connect
 * with Vert.x's {@code NetClient}, plain ones with a bare socket on the calling context's event
 * loop ({@link ProbeConnection#plain}; the {@code dev.vigil.probe.transport} package says why).
 */
public final class HttpProber implements Prober {

  final Vertx vertx;
  final ProbeConnection.Connector tlsConnector;
  final ProbeConnection.Connector plainConnector;
  final KeptConnections idle = new KeptConnections();
  final PatternCosts patterns = PatternCosts.measuringThreadCpu();

  public HttpProber(Vertx vertx) {
    this(vertx, SourceAddress.KERNEL);
  }

  /** Every probe's connection bound to {@code source} ({@code --probe-source-address}). */
  public HttpProber(Vertx vertx, SourceAddress source) {
    this.vertx = vertx;
    this.tlsConnector = ProbeConnection.tls(vertx, source);
    this.plainConnector = ProbeConnection.plain(vertx, tlsConnector, source);
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    long start = System.nanoTime();
    try {
      ProbeTarget probed =
          spec.port() == 0 ? target : new ProbeTarget(target.ip(), spec.portFor(target));
      Http1Exchange exchange = new Http1Exchange(this, probed, spec);
      exchange.start();
      return exchange.promise.future();
    } catch (RuntimeException e) {
      return Future.succeededFuture(ProbeResult.proberError(e, start));
    }
  }

  @Override
  public void forget(ProbeTarget target) {
    idle.forget(target.ip());
  }

  @Override
  public Future<Void> close() {
    idle.closeAll();
    return tlsConnector.close();
  }

  /** The number of idle connections kept for reuse. */
  public int idleConnections() {
    return idle.size();
  }
}
