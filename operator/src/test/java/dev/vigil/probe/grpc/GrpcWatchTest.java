package dev.vigil.probe.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.LoopbackServers;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code active.grpc.watch}: Health/Watch streams against real and misbehaving gRPC servers on
 * 127.0.0.1. Each streamed status is a result at once; an ended stream is re-opened after the
 * backoff; a server without Watch is not asked again; a hanging stream stays one stream.
 */
class GrpcWatchTest {
  static final ServiceMethod<HealthCheckRequest, HealthCheckResponse> WATCH =
      LoopbackServers.healthMethod("Watch");

  static Vertx vertx;
  static GrpcProber prober;
  static Context context;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    prober = new GrpcProber(vertx);
    context = vertx.getOrCreateContext();
  }

  @AfterAll
  static void stop() {
    LoopbackServers.await(prober.close());
    LoopbackServers.await(vertx.close());
  }

  /** A gRPC server whose Watch calls go to {@code onWatch}; null: no Watch (UNIMPLEMENTED). */
  static int server(Consumer<GrpcServerResponse<HealthCheckRequest, HealthCheckResponse>> onWatch) {
    GrpcServer grpc = GrpcServer.server(vertx);
    if (onWatch != null) {
      grpc.callHandler(WATCH, request -> request.handler(m -> onWatch.accept(request.response())));
    }
    HttpServer server =
        vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
    server.requestHandler(grpc);
    LoopbackServers.await(server.listen());
    return server.actualPort();
  }

  static HealthCheckResponse status(ServingStatus s) {
    return HealthCheckResponse.newBuilder().setStatus(s).build();
  }

  static HealthWatcher.Watch watch(int port, List<ProbeResult> results) {
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.GRPC)
            .timeout(Duration.ofSeconds(2))
            .grpc(new CheckSpec.Grpc("", true))
            .build();
    io.vertx.core.Promise<HealthWatcher.Watch> p = io.vertx.core.Promise.promise();
    context.runOnContext(
        v -> p.complete(prober.watch(new ProbeTarget("127.0.0.1", port), spec, results::add)));
    return LoopbackServers.await(p.future());
  }

  static void waitFor(java.util.function.BooleanSupplier condition, long ms) throws Exception {
    long end = System.currentTimeMillis() + ms;
    while (!condition.getAsBoolean() && System.currentTimeMillis() < end) {
      Thread.sleep(20);
    }
  }

  @Test
  void eachStreamedStatusIsAResultAtOnce() throws Exception {
    List<GrpcServerResponse<HealthCheckRequest, HealthCheckResponse>> open =
        new CopyOnWriteArrayList<>();
    int port =
        server(
            response -> {
              open.add(response);
              response.write(status(ServingStatus.SERVING));
            });
    List<ProbeResult> results = new CopyOnWriteArrayList<>();
    HealthWatcher.Watch w = watch(port, results);
    waitFor(() -> results.size() == 1, 5_000);
    assertThat(results).extracting(ProbeResult::detail).containsExactly("grpc SERVING (watch)");
    vertx.runOnContext(v -> open.get(0).write(status(ServingStatus.NOT_SERVING)));
    waitFor(() -> results.size() == 2, 5_000);
    assertThat(results.get(1).passed()).isFalse();
    assertThat(results.get(1).reason()).isEqualTo(Reason.GRPC_NOT_SERVING);
    assertThat(results.get(1).detail()).isEqualTo("grpc NOT_SERVING (watch)");
    w.close();
    assertThat(open).hasSize(1);
  }

  @Test
  void anEndedStreamIsReopenedAfterTheBackoff() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    int port =
        server(
            response -> {
              calls.incrementAndGet();
              response.write(status(ServingStatus.SERVING));
              response.end();
            });
    List<ProbeResult> results = new CopyOnWriteArrayList<>();
    HealthWatcher.Watch w = watch(port, results);
    waitFor(() -> results.size() >= 2, 5_000);
    w.close();
    assertThat(calls.get()).as("re-opened after about 1 s").isEqualTo(2);
    assertThat(results).hasSize(2).allMatch(ProbeResult::passed);
    int after = calls.get();
    Thread.sleep(GrpcProber.WATCH_BACKOFF_MIN_MS + 500);
    assertThat(calls.get()).as("a closed watch opens nothing").isEqualTo(after);
  }

  @Test
  void aServerWithoutWatchIsNotAskedAgain() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    GrpcServer grpc = GrpcServer.server(vertx);
    HttpServer server =
        vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
    server.requestHandler(
        r -> {
          requests.incrementAndGet();
          grpc.handle(r);
        });
    LoopbackServers.await(server.listen());
    List<ProbeResult> results = new CopyOnWriteArrayList<>();
    HealthWatcher.Watch w = watch(server.actualPort(), results);
    Thread.sleep(2 * GrpcProber.WATCH_BACKOFF_MIN_MS + 500);
    w.close();
    assertThat(requests.get()).isEqualTo(1);
    assertThat(results).isEmpty();
  }

  @Test
  void aHangingWatchStreamStaysOneStreamAndGivesNoResult() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    List<GrpcServerResponse<HealthCheckRequest, HealthCheckResponse>> open =
        new CopyOnWriteArrayList<>();
    int port =
        server(
            response -> {
              calls.incrementAndGet();
              open.add(response); // never writes, never ends
            });
    List<ProbeResult> results = new CopyOnWriteArrayList<>();
    HealthWatcher.Watch w = watch(port, results);
    Thread.sleep(2 * GrpcProber.WATCH_BACKOFF_MIN_MS + 500);
    assertThat(calls.get()).isEqualTo(1);
    assertThat(results).isEmpty();
    w.close();
    assertThat(open).hasSize(1);
  }
}
