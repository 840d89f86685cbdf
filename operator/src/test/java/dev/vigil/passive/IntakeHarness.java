package dev.vigil.passive;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.Probing;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.NoProbes;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.TransitionSink;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.ServingCertificate;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A real {@link PoolRuntimes} whose probes never run, an {@link OutcomeIntake} in front of it on a
 * free loopback port with the test CA's certificate ({@link TestTls}), and a {@link FakeReviewer}:
 * for intake tests and the intake benchmark.
 */
final class IntakeHarness implements AutoCloseable {
  static final Probing NO_PROBES = new NoProbes();

  final Vertx vertx;
  final PoolRuntimes runtimes;
  final FakeReviewer reviewer = new FakeReviewer();
  final OutcomeIntake intake;
  final ServingCertificate certificate;
  final int port;

  /** Whether this replica runs pools (leads); a test flips it to play a standby. */
  volatile boolean leading = true;

  IntakeHarness(Vertx vertx, MeterRegistry meters, IntakeLimits limits, LongSupplier clock) {
    this(vertx, meters, limits, clock, TestTls.certFile(), TestTls.keyFile());
  }

  IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      Path certFile,
      Path keyFile) {
    this(vertx, meters, limits, clock, certFile, keyFile, TransitionSink.NONE, null);
  }

  /** With the pools' transitions going to {@code sink}. */
  IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      TransitionSink sink) {
    this(vertx, meters, limits, clock, TestTls.certFile(), TestTls.keyFile(), sink, null);
  }

  /** Taking callers' client certificates that a CA of {@code clientCertificates} issued. */
  IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      ClientCertificates clientCertificates) {
    this(vertx, meters, limits, clock, TestTls.certFile(), TestTls.keyFile(), clientCertificates);
  }

  /** Serving these files, and taking client certificates that {@code clientCertificates} trusts. */
  IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      Path certFile,
      Path keyFile,
      ClientCertificates clientCertificates) {
    this(vertx, meters, limits, clock, certFile, keyFile, TransitionSink.NONE, clientCertificates);
  }

  /** With a single replica's route under {@code route}'s limits instead of one try. */
  IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      RouteLimits route) {
    this(
        vertx,
        meters,
        limits,
        clock,
        TestTls.certFile(),
        TestTls.keyFile(),
        TransitionSink.NONE,
        null,
        route);
  }

  private IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      Path certFile,
      Path keyFile,
      TransitionSink sink,
      ClientCertificates clientCertificates) {
    this(
        vertx,
        meters,
        limits,
        clock,
        certFile,
        keyFile,
        sink,
        clientCertificates,
        RouteLimits.local());
  }

  private IntakeHarness(
      Vertx vertx,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      Path certFile,
      Path keyFile,
      TransitionSink sink,
      ClientCertificates clientCertificates,
      RouteLimits route) {
    this.vertx = vertx;
    this.runtimes = new PoolRuntimes(vertx, (context, callback) -> NO_PROBES, sink, clock);
    this.certificate = new ServingCertificate(vertx, certFile, keyFile);
    this.intake =
        new OutcomeIntake(
            vertx,
            OutcomeRoute.local(vertx, runtimes, meters, route),
            reviewer,
            meters,
            limits,
            clock,
            () -> leading,
            certificate,
            clientCertificates);
    this.port = await(intake.listen("127.0.0.1", 0));
  }

  /** A pool of {@code n} backends at 10.0.x.y, port 8080, named {@code <pool>-<i>}. */
  PoolRuntime pool(PoolKey key, int n, HealthSettings settings) {
    PoolRuntime runtime = runtimes.ensure(key, settings);
    List<Member> members = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      members.add(
          Member.of(
              key.name() + "-" + i,
              "uid-" + i,
              ip(i),
              8080,
              "node-1",
              "zone-a",
              false,
              false,
              List.of()));
    }
    await(runtime.update(settings, CheckSpec.builder().build(), 1, members, Map.of()));
    return runtime;
  }

  static String ip(int i) {
    return "10.0." + (i / 250) + "." + (i % 250 + 1);
  }

  /** Every backend's decision state, read on the pool's context. */
  static List<BackendView> state(PoolRuntime runtime) {
    return await(runtime.freshView()).backends().stream().map(b -> b.decision()).toList();
  }

  /** A report POSTed to this intake over TLS with {@code token} as its bearer token. */
  HttpResponse<String> post(HttpClient http, String path, String token, String body)
      throws Exception {
    return post(http, path, token, body, null);
  }

  /** As {@link #post(HttpClient, String, String, String)}, under {@code key} (null: no key). */
  HttpResponse<String> post(HttpClient http, String path, String token, String body, String key)
      throws Exception {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      req.header(IdempotencyKey.HEADER, key);
    }
    return http.send(req.build(), HttpResponse.BodyHandlers.ofString());
  }

  static <T> T await(Future<T> f) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    await(intake.close());
    await(runtimes.closeAll());
  }
}
