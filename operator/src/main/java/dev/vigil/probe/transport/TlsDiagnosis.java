package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

/**
 * Names the TLS failure behind an HTTP/2 or gRPC probe that only saw its connection close. With TLS
 * 1.3 a client's handshake ends before the server checks the client's certificate, so a server that
 * demands one answers with an alert on a connection the HTTP/2 client already counts as open, and
 * Vert.x fails the request with "connection closed" without the alert. After such a failure, one
 * plain TLS connection with the check's own settings ({@link ClientTls}) waits for the server's
 * word: an alert (or a failed handshake) becomes the probe's reason ("client certificate
 * required"); anything else leaves the result as it was. Only failed TLS probes pay for it.
 */
public final class TlsDiagnosis {

  /** The longest wait for the server's alert. */
  static final long MAX_WAIT_MS = 1_000;

  private final Vertx vertx;
  private final ProbeConnection.Connector connector;

  public TlsDiagnosis(Vertx vertx, SourceAddress source) {
    this.vertx = vertx;
    this.connector = ProbeConnection.tls(vertx, source);
  }

  /**
   * {@code result}, or, when it is a closed connection of a TLS check, the TLS failure a fresh
   * connection to {@code target} shows within {@code timeoutMs} (at most {@link #MAX_WAIT_MS}).
   */
  public Future<ProbeResult> explain(
      ProbeTarget target, CheckSpec spec, ProbeResult result, long timeoutMs) {
    if (!spec.usesTls() || result.reason() != Reason.CONNECTION_CLOSED) {
      return Future.succeededFuture(result);
    }
    int wait = (int) Math.max(1, Math.min(timeoutMs, MAX_WAIT_MS));
    Promise<ProbeResult> promise = Promise.promise();
    connector.connect(
        target,
        spec,
        wait,
        (connection, failure) -> {
          if (failure != null) {
            promise.tryComplete(tlsOr(failure, result));
            return;
          }
          vertx.setTimer(
              wait,
              id -> {
                if (promise.tryComplete(result)) {
                  connection.close();
                }
              });
          connection.receive(
              new ProbeConnection.Receiver() {
                @Override
                public void onData(byte[] bytes, int offset, int length) {}

                @Override
                public void onError(Throwable t) {
                  if (promise.tryComplete(tlsOr(t, result))) {
                    connection.close();
                  }
                }

                @Override
                public void onClose() {
                  promise.tryComplete(result);
                }
              });
        });
    return promise.future();
  }

  /** The TLS reason of {@code failure}, with the probe's latency; else {@code result}. */
  private static ProbeResult tlsOr(Throwable failure, ProbeResult result) {
    ProbeResult classified = TransportFailure.classify(failure, result.latencyMs());
    boolean tls =
        classified.reason() == Reason.TLS
            || classified.reason() == Reason.TLS_UNKNOWN_CA
            || classified.reason() == Reason.TLS_CLIENT_CERTIFICATE;
    return tls ? classified : result;
  }

  public Future<Void> close() {
    return connector.close();
  }
}
