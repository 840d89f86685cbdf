package dev.vigil.probe;

import dev.vigil.testing.LoopbackSockets;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.server.GrpcServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Real servers on 127.0.0.1 for prober tests; everything started here is closed by close(). */
public final class LoopbackServers implements AutoCloseable {

  private final Vertx vertx;
  private final List<Supplier<Future<?>>> closers = new ArrayList<>();
  private SelfSignedCertificate certificate;

  public LoopbackServers(Vertx vertx) {
    this.vertx = vertx;
  }

  /** The Vert.x these servers run on. */
  public Vertx vertx() {
    return vertx;
  }

  /** A TCP server that hands each accepted connection to {@code onConnect}; returns its port. */
  public int raw(Handler<NetSocket> onConnect) {
    return raw(new NetServerOptions(), onConnect);
  }

  public int raw(NetServerOptions options, Handler<NetSocket> onConnect) {
    NetServer server = vertx.createNetServer(options.setHost("127.0.0.1").setPort(0));
    server.connectHandler(onConnect);
    await(server.listen());
    closers.add(server::close);
    return server.actualPort();
  }

  /**
   * An HTTP server with {@code options}, its handlers set by {@code handlers}; returns its port.
   */
  public int http(HttpServerOptions options, Consumer<HttpServer> handlers) {
    HttpServer server = vertx.createHttpServer(options.setHost("127.0.0.1").setPort(0));
    handlers.accept(server);
    await(server.listen());
    closers.add(server::close);
    return server.actualPort();
  }

  /** A server that answers the first bytes of each request with {@code reply}, then closes. */
  public int replying(String reply) {
    return raw(
        socket ->
            socket.handler(
                request -> {
                  socket.handler(null);
                  socket.write(reply).onComplete(ar -> socket.close());
                }));
  }

  /** A TLS server with a self-signed certificate for "localhost", answering 200. */
  public int tlsSelfSigned() {
    NetServerOptions options =
        new NetServerOptions().setSsl(true).setKeyCertOptions(certificate().keyCertOptions());
    return raw(
        options,
        socket ->
            socket.handler(
                request ->
                    socket
                        .write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                        .onComplete(ar -> socket.close())));
  }

  /**
   * A gRPC server with grpc.health.v1.Health/Check; services not in {@code statuses} get NOT_FOUND
   * (as grpc-java's HealthStatusManager does). {@code statuses == null}: no health service at all
   * (UNIMPLEMENTED).
   */
  public int grpcHealth(Map<String, HealthCheckResponse.ServingStatus> statuses) {
    GrpcServer grpc = GrpcServer.server(vertx);
    if (statuses != null) {
      grpc.callHandler(
          healthMethod("Check"),
          request ->
              request.handler(
                  message -> {
                    HealthCheckResponse.ServingStatus status = statuses.get(message.getService());
                    if (status == null) {
                      request.response().status(GrpcStatus.NOT_FOUND).end();
                    } else {
                      request
                          .response()
                          .send(HealthCheckResponse.newBuilder().setStatus(status).build());
                    }
                  }));
    }
    return http(new HttpServerOptions(), server -> server.requestHandler(grpc));
  }

  /**
   * A gRPC server over TLS (h2 by ALPN, a self-signed certificate for "localhost") whose health
   * service answers SERVING, and which hands the SNI name of each new connection (null when none
   * was sent) to {@code sni}.
   */
  public int grpcHealthTls(java.util.function.Consumer<String> sni) {
    GrpcServer grpc = serving(vertx);
    return http(
        new HttpServerOptions()
            .setSsl(true)
            .setUseAlpn(true)
            .setSni(true)
            .setKeyCertOptions(certificate().keyCertOptions()),
        server ->
            server
                .connectionHandler(c -> sni.accept(c.indicatedServerName()))
                .requestHandler(grpc));
  }

  /** The self-signed certificate for "localhost" of these servers (made at the first ask). */
  public SelfSignedCertificate certificate() {
    if (certificate == null) {
      certificate = SelfSignedCertificate.create("localhost");
    }
    return certificate;
  }

  /** A gRPC server whose grpc.health.v1.Health/Check answers SERVING to every request. */
  public static GrpcServer serving(Vertx vertx) {
    GrpcServer grpc = GrpcServer.server(vertx);
    grpc.callHandler(
        healthMethod("Check"),
        request ->
            request.handler(
                message ->
                    request
                        .response()
                        .send(
                            HealthCheckResponse.newBuilder()
                                .setStatus(HealthCheckResponse.ServingStatus.SERVING)
                                .build())));
    return grpc;
  }

  /** The server side of a {@code grpc.health.v1.Health} method ({@code Check}, {@code Watch}). */
  public static ServiceMethod<HealthCheckRequest, HealthCheckResponse> healthMethod(String name) {
    return ServiceMethod.server(
        ServiceName.create("grpc.health.v1.Health"),
        name,
        GrpcMessageEncoder.encoder(),
        GrpcMessageDecoder.decoder(HealthCheckRequest.getDefaultInstance()));
  }

  /** A port where nothing listens (bound, then released). */
  public int refusing() {
    // a plain socket: Vert.x shares listeners between its servers, closing one may keep the port
    return LoopbackSockets.closedPort();
  }

  public static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    for (Supplier<Future<?>> closer : closers) {
      try {
        closer.get().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
      } catch (Exception ignored) {
        // best effort
      }
    }
    closers.clear();
    if (certificate != null) {
      certificate.delete();
    }
  }
}
