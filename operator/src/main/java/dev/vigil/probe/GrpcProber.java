package dev.vigil.probe;

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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * gRPC checks: {@code grpc.health.v1.Health/Check} with the configured service name over Vert.x
 * {@link GrpcClient}, using the message classes of {@code io.grpc:grpc-services} (no code
 * generation). SERVING passes; NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN, a NOT_FOUND or UNIMPLEMENTED
 * call status, or a peer that does not speak gRPC fail with their own reason.
 *
 * <p>The HTTP/2 connection is kept between probes (gRPC's normal mode), and closed after a timeout
 * or a protocol error so the next probe starts clean. TLS when {@code tls} is set ({@code
 * insecureSkipVerify} honoured; {@code serverName} is not sent as SNI by this client).
 */
public final class GrpcProber implements Prober {

  private static final ServiceMethod<HealthCheckResponse, HealthCheckRequest> CHECK =
      ServiceMethod.client(
          ServiceName.create("grpc.health.v1.Health"),
          "Check",
          GrpcMessageEncoder.encoder(),
          GrpcMessageDecoder.decoder(HealthCheckResponse.getDefaultInstance()));

  private final Vertx vertx;
  private final GrpcClient plain;
  private final GrpcClient tlsVerifying;
  private final GrpcClient tlsTrustingAll;
  private final Map<ProbeTarget, HttpConnection> connections = new ConcurrentHashMap<>();

  public GrpcProber(Vertx vertx) {
    this.vertx = vertx;
    this.plain = GrpcClient.client(vertx, base().setHttp2ClearTextUpgrade(false));
    this.tlsVerifying =
        GrpcClient.client(vertx, base().setSsl(true).setUseAlpn(true).setVerifyHost(true));
    this.tlsTrustingAll =
        GrpcClient.client(
            vertx, base().setSsl(true).setUseAlpn(true).setTrustAll(true).setVerifyHost(false));
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
      return Future.succeededFuture(
          ProbeResult.fail(Reason.INTERNAL, "prober error: " + e, HttpProber.elapsedMs(start)));
    }
  }

  private Future<ProbeResult> check(ProbeTarget target, CheckSpec spec, long start) {
    long timeout = spec.timeout().toMillis();
    GrpcClient client =
        !spec.usesTls() ? plain : spec.tls().insecureSkipVerify() ? tlsTrustingAll : tlsVerifying;
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
        .request(SocketAddress.inetSocketAddress(target.port(), target.ip()), CHECK)
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
        .otherwise(failure -> failure(target, failure, start))
        .onComplete(
            ar -> {
              vertx.cancelTimer(timer);
              promise.tryComplete(
                  ar.succeeded()
                      ? ar.result()
                      : ProbeResult.fail(
                          Reason.INTERNAL, "prober error: " + ar.cause(), elapsed(start)));
            });
    return promise.future();
  }

  private ProbeResult verdict(
      GrpcClientResponse<HealthCheckRequest, HealthCheckResponse> response,
      HealthCheckResponse message,
      long start) {
    if (response.status() != null && response.status() != GrpcStatus.OK) {
      return callStatus(response.status(), start);
    }
    long latency = elapsed(start);
    return switch (message.getStatus()) {
      case SERVING -> ProbeResult.pass("grpc SERVING", latency);
      case NOT_SERVING -> ProbeResult.fail(Reason.GRPC_NOT_SERVING, "grpc NOT_SERVING", latency);
      case SERVICE_UNKNOWN ->
          ProbeResult.fail(Reason.GRPC_SERVICE_UNKNOWN, "grpc SERVICE_UNKNOWN", latency);
      default -> ProbeResult.fail(Reason.GRPC_UNKNOWN, "grpc " + message.getStatus(), latency);
    };
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
    return Future.all(plain.close(), tlsVerifying.close(), tlsTrustingAll.close()).mapEmpty();
  }

  private static long elapsed(long start) {
    return HttpProber.elapsedMs(start);
  }
}
