package dev.vigil.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ScheduledProbing;
import dev.vigil.probe.VertxTimers;
import dev.vigil.probe.grpc.GrpcProber;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code active.grpc.watch} through the real runtime: a NOT_SERVING streamed by Health/Watch takes
 * the backend Down at once, without waiting for the interval's Check (10 minutes here).
 */
class GrpcWatchRuntimeTest {
  private Vertx vertx;
  private Context context;
  private GrpcProber prober;
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final AtomicReference<ServingStatus> status =
      new AtomicReference<>(ServingStatus.SERVING);
  private final List<GrpcServerResponse<HealthCheckRequest, HealthCheckResponse>> streams =
      new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    context = vertx.getOrCreateContext();
    prober = new GrpcProber(vertx);
  }

  @AfterEach
  void stop() throws Exception {
    prober.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static ServiceMethod<HealthCheckRequest, HealthCheckResponse> method(String name) {
    return ServiceMethod.server(
        ServiceName.create("grpc.health.v1.Health"),
        name,
        GrpcMessageEncoder.encoder(),
        GrpcMessageDecoder.decoder(HealthCheckRequest.getDefaultInstance()));
  }

  private HealthCheckResponse current() {
    return HealthCheckResponse.newBuilder().setStatus(status.get()).build();
  }

  private int server() throws Exception {
    GrpcServer grpc = GrpcServer.server(vertx);
    grpc.callHandler(
        method("Check"), request -> request.handler(m -> request.response().send(current())));
    grpc.callHandler(
        method("Watch"),
        request ->
            request.handler(
                m -> {
                  streams.add(request.response());
                  request.response().write(current());
                }));
    HttpServer server =
        vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
    server.requestHandler(grpc);
    server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    return server.actualPort();
  }

  private final TransitionSink sink =
      new TransitionSink() {
        @Override
        public void stateChanged(PoolKey p, String b, String f, String t, String r) {
          events.add(b + " " + f + "->" + t + ": " + r);
        }
      };

  private void waitFor(java.util.function.BooleanSupplier condition) throws Exception {
    long end = System.currentTimeMillis() + 10_000;
    while (!condition.getAsBoolean() && System.currentTimeMillis() < end) {
      Thread.sleep(20);
    }
  }

  @Test
  void aStreamedNotServingTakesTheBackendDownWithoutWaitingForTheInterval() throws Exception {
    int port = server();
    HealthSettings settings =
        HealthSettings.builder()
            .intervalMs(600_000)
            .timeoutMs(1_000)
            .jitterPercent(0)
            .rise(1)
            .fall(1)
            .build();
    CheckSpec check =
        CheckSpec.builder()
            .protocol(ProbeProtocol.GRPC)
            .timeout(Duration.ofSeconds(1))
            .grpc(new CheckSpec.Grpc("", true))
            .build();
    PoolRuntime runtime =
        new PoolRuntime(
            new PoolKey("shop", "greeter"),
            new VertxTimers(context),
            settings,
            cb ->
                new ScheduledProbing(
                    prober, prober, new VertxTimers(context), new SplittableRandom(7), cb),
            pool -> {},
            sink,
            Confirmer.ALONE,
            System::currentTimeMillis);
    runtime
        .update(
            settings,
            check,
            1,
            List.of(
                Member.of("a", "uid-a", "127.0.0.1", port, null, null, false, false, List.of())),
            Map.of())
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);

    waitFor(() -> events.size() == 1);
    assertThat(events).containsExactly("a UNKNOWN->UP: first probe passed");

    status.set(ServingStatus.NOT_SERVING);
    vertx.runOnContext(v -> streams.get(0).write(current()));
    waitFor(() -> events.size() == 2);
    assertThat(events.get(1)).isEqualTo("a UP->DOWN: first probe failed: grpc NOT_SERVING (watch)");
    assertThat(streams).as("one Watch stream for the backend").hasSize(1);
  }
}
