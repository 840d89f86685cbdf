package dev.vigil.passive;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.common.GrpcStatus;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The OTLP receiver's load run (bench/otlp-load.sh): OTLP/gRPC exports of 1,000 Traefik records
 * each (99 % 200, 1 % 503) over TLS to the real intake, authentication cached, the server's Vert.x
 * pinned to one event loop (intake and pool runtime share it), the client on its own Vert.x. Prints
 * records/s and the server loop's CPU per record per round and their median. The overload phase
 * (10x the exports in flight) runs server and client in JVMs of their own: {@link
 * OtlpOverloadServer}, {@link OtlpOverloadClient}.
 *
 * <p>Arguments: backends, seconds per round, rounds, exports in flight, warm-up seconds.
 */
public final class OtlpIntakeLoad {
  private static final int BATCH = 1_000;
  private static final String TOKEN = "load-token";
  static volatile boolean running;

  private OtlpIntakeLoad() {}

  public static void main(String[] args) throws Exception {
    int backends = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    int inFlight = args.length > 3 ? Integer.parseInt(args[3]) : 8;
    int warmUp = args.length > 4 ? Integer.parseInt(args[4]) : 15;
    System.out.printf(
        "OTLP/gRPC cores=%d backends=%d batch=%d inFlight=%d seconds=%d rounds=%d%n",
        Runtime.getRuntime().availableProcessors(), backends, BATCH, inFlight, seconds, rounds);
    throughput(backends, seconds, rounds, inFlight, warmUp);
  }

  private static void throughput(int backends, int seconds, int rounds, int inFlight, int warmUp)
      throws Exception {
    Vertx server = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2));
    Vertx client = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    IntakeHarness harness =
        harness(server, backends, IntakeLimits.defaults().withRate(1_000_000, 1_000_000));
    long loop = loopThread(server);
    Map<GrpcStatus, AtomicLong> answers = new ConcurrentHashMap<>();
    AtomicLong applied = new AtomicLong();
    GrpcClient grpc = client(client);
    List<ExportLogsServiceRequest> exports = exports(backends, 16);
    running = true;
    for (int i = 0; i < inFlight; i++) {
      send(grpc, harness.port, exports, new AtomicLong(i), applied, answers);
    }
    Thread.sleep(warmUp * 1_000L);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<double[]> results = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      long a0 = applied.get();
      long c0 = threads.getThreadCpuTime(loop);
      long t0 = System.nanoTime();
      Thread.sleep(seconds * 1_000L);
      long a1 = applied.get();
      long c1 = threads.getThreadCpuTime(loop);
      long t1 = System.nanoTime();
      double perSecond = (a1 - a0) * 1e9 / (t1 - t0);
      double cpuNs = (double) (c1 - c0) / Math.max(1, a1 - a0);
      results.add(new double[] {perSecond, cpuNs});
      System.out.printf(
          "  round=%d records/s=%.0f loopCpuNs/record=%.0f loopBusy=%.0f%%%n",
          r + 1, perSecond, cpuNs, (c1 - c0) * 100.0 / (t1 - t0));
    }
    running = false;
    Thread.sleep(500);
    double[] rate = results.stream().mapToDouble(x -> x[0]).sorted().toArray();
    double[] cpu = results.stream().mapToDouble(x -> x[1]).sorted().toArray();
    System.out.printf(
        "OTLP MEDIAN records/s=%.0f loopCpuNs/record=%.0f (=> %.0f records/s per core) answers=%s%n",
        rate[rate.length / 2], cpu[cpu.length / 2], 1e9 / cpu[cpu.length / 2], answers);
    close(grpc, harness, client, server);
  }

  static IntakeHarness harness(Vertx server, int backends, IntakeLimits limits) {
    IntakeHarness harness =
        new IntakeHarness(server, new SimpleMeterRegistry(), limits, System::currentTimeMillis);
    harness.reviewer.user(TOKEN, "system:serviceaccount:load:traefik", "load");
    PoolKey pool = new PoolKey("load", "web");
    harness.pool(pool, backends, HealthSettings.defaults());
    BackendAddresses addresses = new BackendAddresses();
    List<String> ips = new ArrayList<>();
    for (int i = 0; i < backends; i++) {
      ips.add(IntakeHarness.ip(i));
    }
    addresses.replace(pool, OtlpReceiverTest.members(ips.toArray(String[]::new)));
    harness.intake.receiveOtlp(addresses, List.of(OtlpProfile.TRAEFIK, OtlpProfile.ENVOY));
    return harness;
  }

  private static GrpcClient client(Vertx vertx) {
    return client(vertx, dev.vigil.testing.TestTls.ca().caPem());
  }

  /** A gRPC client over TLS (h2 by ALPN) trusting the CA of {@code caPem}. */
  static GrpcClient client(Vertx vertx, String caPem) {
    return GrpcClient.client(
        vertx,
        new HttpClientOptions()
            .setSsl(true)
            .setUseAlpn(true)
            .setProtocolVersion(HttpVersion.HTTP_2)
            .setTrustOptions(
                new PemTrustOptions().addCertValue(io.vertx.core.buffer.Buffer.buffer(caPem))));
  }

  static void send(
      GrpcClient grpc,
      int port,
      List<ExportLogsServiceRequest> exports,
      AtomicLong n,
      AtomicLong applied,
      Map<GrpcStatus, AtomicLong> answers) {
    if (!running) {
      return;
    }
    ExportLogsServiceRequest export = exports.get((int) (n.getAndIncrement() % exports.size()));
    grpc.request(SocketAddress.inetSocketAddress(port, "127.0.0.1"), OtlpClients.EXPORT)
        .compose(
            req -> {
              req.headers().set("authorization", "Bearer " + TOKEN);
              req.end(export);
              return req.response();
            })
        .compose(
            resp -> {
              long[] rejected = {0};
              resp.handler(m -> rejected[0] = m.getPartialSuccess().getRejectedLogRecords());
              return resp.end()
                  .transform(
                      v ->
                          io.vertx.core.Future.succeededFuture(
                              new long[] {resp.status().code, rejected[0]}));
            })
        .onComplete(
            r -> {
              GrpcStatus status =
                  r.succeeded() ? GrpcStatus.valueOf((int) r.result()[0]) : GrpcStatus.UNKNOWN;
              answers.computeIfAbsent(status, k -> new AtomicLong()).incrementAndGet();
              if (status == GrpcStatus.OK) {
                applied.addAndGet(records(export) - r.result()[1]);
              }
              send(grpc, port, exports, n, applied, answers);
            });
  }

  static List<ExportLogsServiceRequest> exports(int backends, int n) {
    return exports(backends, n, BATCH);
  }

  /** The log records in an export. */
  static int records(ExportLogsServiceRequest export) {
    return export.getResourceLogsList().stream()
        .flatMap(r -> r.getScopeLogsList().stream())
        .mapToInt(s -> s.getLogRecordsCount())
        .sum();
  }

  /** {@code n} exports of {@code batch} Traefik records each, 1 in 100 a 503. */
  static List<ExportLogsServiceRequest> exports(int backends, int n, int batch) {
    List<ExportLogsServiceRequest> out = new ArrayList<>();
    int k = 0;
    for (int e = 0; e < n; e++) {
      List<LogRecord> records = new ArrayList<>(batch);
      for (int i = 0; i < batch; i++, k++) {
        int status = k % 100 == 0 ? 503 : 200;
        records.add(OtlpClients.traefik(IntakeHarness.ip(k % backends) + ":8080", status, status));
      }
      out.add(OtlpClients.traefikExport(records));
    }
    return out;
  }

  private static long loopThread(Vertx vertx) throws Exception {
    long[] id = {0};
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    vertx.runOnContext(
        v -> {
          id[0] = Thread.currentThread().getId();
          done.countDown();
        });
    done.await();
    return id[0];
  }

  private static void close(GrpcClient grpc, IntakeHarness harness, Vertx client, Vertx server) {
    IntakeHarness.await(grpc.close());
    harness.close();
    IntakeHarness.await(client.close());
    IntakeHarness.await(server.close());
  }
}
