package dev.vigil.probe.grpc;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.transport.ClientTls;
import dev.vigil.probe.transport.SourceAddress;
import dev.vigil.probe.transport.TlsClientSet;
import dev.vigil.probe.transport.TlsDiagnosis;
import dev.vigil.probe.transport.TransportFailure;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.client.GrpcClientResponse;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * gRPC checks: {@code grpc.health.v1.Health/Check} with the configured service name over Vert.x
 * {@link GrpcClient}, using the message classes of {@code io.grpc:grpc-services} (no code
 * generation). SERVING passes; NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN, a NOT_FOUND or UNIMPLEMENTED
 * call status, or a peer that does not speak gRPC fail with their own reason.
 *
 * <p>The HTTP/2 connection is kept between probes (gRPC's normal mode), and closed after a timeout
 * or a protocol error so the next probe starts clean. TLS when {@code tls} is set ({@code
 * insecureSkipVerify} honoured). {@code tls.serverName} is sent as SNI, is the name a verified
 * certificate must match, and is the {@code :authority}: the connection goes to the Pod IP under
 * that name (an address that carries both, so nothing is resolved), and connections are kept per IP
 * and name.
 */
public final class GrpcProber implements Prober, HealthWatcher {

  /** First wait before a Watch stream is re-opened; doubles on each failure up to the max. */
  static final long WATCH_BACKOFF_MIN_MS = 1_000;

  static final long WATCH_BACKOFF_MAX_MS = 30_000;

  private static final ServiceMethod<HealthCheckResponse, HealthCheckRequest> WATCH =
      ServiceMethod.client(
          ServiceName.create("grpc.health.v1.Health"),
          "Watch",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(HealthCheckResponse.getDefaultInstance()));

  private static final ServiceMethod<HealthCheckResponse, HealthCheckRequest> CHECK =
      ServiceMethod.client(
          ServiceName.create("grpc.health.v1.Health"),
          "Check",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(HealthCheckResponse.getDefaultInstance()));

  private final Vertx vertx;
  private final GrpcClient plain;
  private final TlsClientSet<GrpcClient> tls;
  private final TlsDiagnosis diagnosis;
  private final Map<ProbeTarget, HttpConnection> connections = new ConcurrentHashMap<>();

  public GrpcProber(Vertx vertx) {
    this(vertx, SourceAddress.KERNEL);
  }

  /** Every connection (probes and Watch streams) bound to {@code source}. */
  public GrpcProber(Vertx vertx, SourceAddress source) {
    this.vertx = vertx;
    this.plain = GrpcClient.client(vertx, source.applyTo(base().setHttp2ClearTextUpgrade(false)));
    this.tls =
        new TlsClientSet<>(
            GrpcProber::tls,
            source,
            options -> GrpcClient.client(vertx, options),
            GrpcClient::close,
            System::currentTimeMillis);
    this.diagnosis = new TlsDiagnosis(vertx, source);
  }

  /**
   * TLS with h2 by ALPN. {@code sni}: the authority's host (the serverName, see {@link #address})
   * goes out as SNI; only for named checks, since a Pod IP must never be sent as SNI (RFC 6066).
   */
  private static HttpClientOptions tls(boolean trustAll, boolean sni) {
    return base()
        .setSsl(true)
        .setUseAlpn(true)
        .setTrustAll(trustAll)
        .setVerifyHost(!trustAll)
        .setForceSni(sni);
  }

  private static HttpClientOptions base() {
    return new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2).setTcpNoDelay(true);
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    long start = System.nanoTime();
    try {
      return check(new ProbeTarget(target.ip(), spec.portFor(target)), spec, start);
    } catch (RuntimeException e) {
      return Future.succeededFuture(ProbeResult.proberError(e, start));
    }
  }

  private Future<ProbeResult> check(ProbeTarget target, CheckSpec spec, long start) {
    long timeout = spec.timeout().toMillis();
    GrpcClient client = client(spec);
    Promise<ProbeResult> promise = Promise.promise();
    long timer =
        vertx.setTimer(
            timeout,
            id -> {
              if (promise.tryComplete(ProbeResult.timeout(timeout))) {
                closeConnection(target);
              }
            });
    client
        .request(address(target, spec), CHECK)
        .compose(
            request -> {
              HttpConnection connection = request.connection();
              if (connection != null && connections.put(target, connection) != connection) {
                connection.closeHandler(v -> connections.remove(target, connection));
              }
              request.timeout(timeout, TimeUnit.MILLISECONDS);
              return request.send(
                  HealthCheckRequest.newBuilder().setService(spec.grpc().service()).build());
            })
        .compose(response -> response.last().map(message -> verdict(response, message, start)))
        .recover(
            failure -> diagnosis.explain(target, spec, failure(target, failure, start), timeout))
        .onComplete(
            ar -> {
              vertx.cancelTimer(timer);
              promise.tryComplete(
                  ar.succeeded() ? ar.result() : ProbeResult.proberError(ar.cause(), start));
            });
    return promise.future();
  }

  private GrpcClient client(CheckSpec spec) {
    if (!spec.usesTls()) {
      return plain;
    }
    return tls.get(spec.tls(), spec.tls().serverName() != null);
  }

  /**
   * The Pod's address; over TLS with a {@code serverName}, the same IP and port carrying that name,
   * so the client sends it as SNI and {@code :authority} without resolving it.
   */
  static SocketAddress address(ProbeTarget target, CheckSpec spec) {
    return ClientTls.address(target, spec.usesTls() ? spec.tls().serverName() : null);
  }

  private ProbeResult verdict(
      GrpcClientResponse<HealthCheckRequest, HealthCheckResponse> response,
      HealthCheckResponse message,
      long start) {
    if (response.status() != null && response.status() != GrpcStatus.OK) {
      return callStatus(response.status(), start);
    }
    return servingStatus(message, "", elapsed(start));
  }

  private static ProbeResult servingStatus(HealthCheckResponse message, String how, long latency) {
    return switch (message.getStatus()) {
      case SERVING -> ProbeResult.pass("grpc SERVING" + how, latency);
      case NOT_SERVING ->
          ProbeResult.fail(Reason.GRPC_NOT_SERVING, "grpc NOT_SERVING" + how, latency);
      case SERVICE_UNKNOWN ->
          ProbeResult.fail(Reason.GRPC_SERVICE_UNKNOWN, "grpc SERVICE_UNKNOWN" + how, latency);
      default ->
          ProbeResult.fail(Reason.GRPC_UNKNOWN, "grpc " + message.getStatus() + how, latency);
    };
  }

  @Override
  public Watch watch(ProbeTarget target, CheckSpec spec, Consumer<ProbeResult> results) {
    HealthStream s =
        new HealthStream(new ProbeTarget(target.ip(), spec.portFor(target)), spec, results);
    s.open();
    return s;
  }

  /**
   * One backend's Watch stream: each message is a result at once (detail {@code grpc SERVING
   * (watch)}); when the stream ends or fails it is re-opened after a backoff (1 s doubling to 30 s,
   * back to 1 s once a message arrives). A server without Watch (UNIMPLEMENTED) is not asked again:
   * the interval's Check goes on alone. A stream that hangs stays one open stream; the Check is its
   * liveness.
   */
  private final class HealthStream implements Watch {
    final ProbeTarget target;
    final CheckSpec spec;
    final Consumer<ProbeResult> results;
    boolean closed;
    long backoff = WATCH_BACKOFF_MIN_MS;
    long retryTimer = -1;
    io.vertx.grpc.client.GrpcClientRequest<HealthCheckRequest, HealthCheckResponse> current;

    HealthStream(ProbeTarget target, CheckSpec spec, Consumer<ProbeResult> results) {
      this.target = target;
      this.spec = spec;
      this.results = results;
    }

    void open() {
      retryTimer = -1;
      if (closed) {
        return;
      }
      long start = System.nanoTime();
      client(spec)
          .request(address(target, spec), WATCH)
          .compose(
              request -> {
                if (closed) {
                  request.cancel();
                  return Future.failedFuture("closed");
                }
                current = request;
                return request.send(
                    HealthCheckRequest.newBuilder().setService(spec.grpc().service()).build());
              })
          .onSuccess(
              response -> {
                response.handler(
                    message -> {
                      backoff = WATCH_BACKOFF_MIN_MS;
                      if (!closed) {
                        results.accept(servingStatus(message, " (watch)", elapsed(start)));
                      }
                    });
                response.exceptionHandler(t -> ended(null));
                response.endHandler(v -> ended(response.status()));
              })
          .onFailure(t -> ended(statusOf(t)));
    }

    void ended(GrpcStatus status) {
      current = null;
      if (closed || retryTimer >= 0) {
        return;
      }
      if (status == GrpcStatus.UNIMPLEMENTED) {
        return; // no Watch on this server: Check alone
      }
      retryTimer = vertx.setTimer(backoff, id -> open());
      backoff = Math.min(backoff * 2, WATCH_BACKOFF_MAX_MS);
    }

    @Override
    public void close() {
      closed = true;
      if (retryTimer >= 0) {
        vertx.cancelTimer(retryTimer);
        retryTimer = -1;
      }
      if (current != null) {
        current.cancel();
        current = null;
      }
    }
  }

  private static GrpcStatus statusOf(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof io.vertx.grpc.common.GrpcErrorException e) {
        return e.status();
      }
      if (t instanceof io.vertx.grpc.client.InvalidStatusException e) {
        return e.actualStatus();
      }
    }
    return null;
  }

  private static ProbeResult callStatus(GrpcStatus status, long start) {
    long latency = elapsed(start);
    return switch (status) {
      case NOT_FOUND -> ProbeResult.fail(Reason.GRPC_SERVICE_UNKNOWN, "grpc NOT_FOUND", latency);
      case UNIMPLEMENTED ->
          ProbeResult.fail(Reason.GRPC_UNIMPLEMENTED, "grpc UNIMPLEMENTED", latency);
      case DEADLINE_EXCEEDED -> ProbeResult.timeout(latency);
      default -> ProbeResult.fail(Reason.GRPC_STATUS, "grpc " + status.name(), latency);
    };
  }

  private ProbeResult failure(ProbeTarget target, Throwable failure, long start) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof io.vertx.grpc.common.GrpcErrorException e) {
        return callStatus(e.status(), start);
      }
      if (t instanceof io.vertx.grpc.client.InvalidStatusException e) {
        return callStatus(e.actualStatus(), start);
      }
    }
    closeConnection(target);
    ProbeResult transport = TransportFailure.classify(failure, elapsed(start));
    if (transport.reason() != Reason.CONNECTION_ERROR) {
      return transport;
    }
    return ProbeResult.fail(
        Reason.GRPC_PROTOCOL, "not a gRPC answer: " + transport.detail(), elapsed(start));
  }

  private void closeConnection(ProbeTarget target) {
    HttpConnection connection = connections.remove(target);
    if (connection != null) {
      connection.close();
    }
  }

  @Override
  public void forget(ProbeTarget target) {
    connections.keySet().stream()
        .filter(t -> t.ip().equals(target.ip()))
        .toList()
        .forEach(this::closeConnection);
  }

  @Override
  public Future<Void> close() {
    connections.values().forEach(HttpConnection::close);
    connections.clear();
    return Future.all(List.of(plain.close(), tls.close(), diagnosis.close())).mapEmpty();
  }

  private static long elapsed(long start) {
    return ProbeResult.elapsedMs(start);
  }
}
