package dev.vigil.passive;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The intake's load run: batches of 1,000 outcomes over loopback HTTP, authentication cached, the
 * server's Vert.x pinned to one event loop (intake and pool runtime share it), a client on its own
 * Vert.x. Prints, per pool size, outcomes/s and the server event loop's CPU time per outcome.
 *
 * <pre>
 * mvn -B -q -pl operator -Pintake-load test-compile exec:exec -Dload.args="10,100,1000 10 3"
 * </pre>
 *
 * Arguments: pool sizes, seconds per measured round, rounds (median reported), in-flight requests,
 * warm-up seconds.
 */
public final class OutcomeIntakeLoad {
  private static final int BATCH = 1_000;
  private static final String TOKEN = "load-token";

  private OutcomeIntakeLoad() {}

  public static void main(String[] args) throws Exception {
    int[] sizes =
        Arrays.stream((args.length > 0 ? args[0] : "10,100,1000").split(","))
            .mapToInt(Integer::parseInt)
            .toArray();
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    int inFlight = args.length > 3 ? Integer.parseInt(args[3]) : 8;
    warmUpSeconds = args.length > 4 ? Integer.parseInt(args[4]) : 15;
    System.out.printf(
        "cores=%d loadavg(before)=%s batch=%d inFlight=%d seconds=%d rounds=%d%n",
        Runtime.getRuntime().availableProcessors(),
        loadAverage(),
        BATCH,
        inFlight,
        seconds,
        rounds);
    for (int size : sizes) {
      run(size, seconds, rounds, inFlight);
    }
  }

  private static void run(int backends, int seconds, int rounds, int inFlight) throws Exception {
    Vertx server = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(2));
    Vertx clientVertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    IntakeHarness harness =
        new IntakeHarness(
            server,
            new SimpleMeterRegistry(),
            IntakeLimits.defaults().withRate(1_000_000, 1_000_000),
            System::currentTimeMillis);
    harness.reviewer.user(TOKEN, "system:serviceaccount:load:reporter", "load");
    harness.pool(new PoolKey("load", "web"), backends, HealthSettings.defaults());
    long loopThread = loopThreadId(server);

    List<Buffer> bodies = bodies(backends, 16);
    HttpClient client =
        clientVertx
            .httpClientBuilder()
            .with(
                new HttpClientOptions()
                    .setKeepAlive(true)
                    .setTcpNoDelay(true)
                    .setSsl(true)
                    .setTrustOptions(
                        new io.vertx.core.net.PemTrustOptions()
                            .addCertValue(Buffer.buffer(dev.vigil.testing.TestTls.ca().caPem()))))
            .with(new PoolOptions().setHttp1MaxSize(inFlight))
            .build();
    RequestOptions options =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setHost("127.0.0.1")
            .setPort(harness.port)
            .setURI(OutcomeIntake.path("load", "web"))
            .putHeader("Content-Type", "application/json")
            .putHeader("Authorization", "Bearer " + TOKEN);
    AtomicLong accepted = new AtomicLong();
    AtomicLong failures = new AtomicLong();
    AtomicReference<String> lastFailure = new AtomicReference<>();
    AtomicLong sent = new AtomicLong();
    volatile_running[0] = true;
    for (int i = 0; i < inFlight; i++) {
      loop(client, options, bodies, sent, accepted, failures, lastFailure);
    }
    Thread.sleep(warmUpSeconds * 1_000L); // JIT warm-up; slow on a loaded machine
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    List<double[]> results = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      long a0 = accepted.get();
      long cpu0 = threads.getThreadCpuTime(loopThread);
      long t0 = System.nanoTime();
      Thread.sleep(seconds * 1_000L);
      long a1 = accepted.get();
      long cpu1 = threads.getThreadCpuTime(loopThread);
      long t1 = System.nanoTime();
      double perSecond = (a1 - a0) * 1e9 / (t1 - t0);
      double cpuNsPerOutcome = (double) (cpu1 - cpu0) / Math.max(1, a1 - a0);
      double busy = (double) (cpu1 - cpu0) / (t1 - t0);
      results.add(new double[] {perSecond, cpuNsPerOutcome, busy});
      System.out.printf(
          "  backends=%d round=%d outcomes/s=%.0f loopCpuNs/outcome=%.0f loopBusy=%.0f%%"
              + " loadavg=%s%n",
          backends, r + 1, perSecond, cpuNsPerOutcome, busy * 100, loadAverage());
    }
    volatile_running[0] = false;
    Thread.sleep(500);
    results.sort((x, y) -> Double.compare(x[0], y[0]));
    double[] median = results.get(results.size() / 2);
    double[] cpu = results.stream().mapToDouble(x -> x[1]).sorted().toArray();
    System.out.printf(
        "backends=%d MEDIAN outcomes/s=%.0f  median loopCpuNs/outcome=%.0f"
            + " (=> %.0f outcomes/s per fully used core)  failures=%d %s%n",
        backends,
        median[0],
        cpu[cpu.length / 2],
        1e9 / cpu[cpu.length / 2],
        failures.get(),
        lastFailure.get() == null ? "" : lastFailure.get());
    client.close();
    harness.close();
    IntakeHarness.await(clientVertx.close());
    IntakeHarness.await(server.close());
  }

  private static volatile boolean[] volatile_running = {false};
  private static int warmUpSeconds;

  private static void loop(
      HttpClient client,
      RequestOptions options,
      List<Buffer> bodies,
      AtomicLong sent,
      AtomicLong accepted,
      AtomicLong failures,
      AtomicReference<String> lastFailure) {
    if (!volatile_running[0]) {
      return;
    }
    Buffer body = bodies.get((int) (sent.getAndIncrement() % bodies.size()));
    client
        .request(options)
        .compose(req -> req.send(body))
        .compose(resp -> resp.body().map(b -> new Object[] {resp.statusCode(), b}))
        .onComplete(
            r -> {
              if (r.succeeded() && (int) r.result()[0] == 200) {
                Buffer b = (Buffer) r.result()[1];
                // {"accepted":1000,... : read the count without a full parse
                accepted.addAndGet(acceptedOf(b));
              } else {
                failures.incrementAndGet();
                lastFailure.set(
                    r.succeeded()
                        ? r.result()[0] + " " + r.result()[1]
                        : String.valueOf(r.cause()));
              }
              loop(client, options, bodies, sent, accepted, failures, lastFailure);
            });
  }

  private static long acceptedOf(Buffer b) {
    String s = b.getString(0, Math.min(40, b.length()));
    int i = s.indexOf(':') + 1;
    int j = s.indexOf(',', i);
    return Long.parseLong(s.substring(i, j));
  }

  /** JSON arrays of BATCH outcomes over the pool's backends: 99 % ok, 1 % status 503. */
  private static List<Buffer> bodies(int backends, int n) {
    SplittableRandom random = new SplittableRandom(42);
    List<Buffer> out = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      StringBuilder sb = new StringBuilder("[");
      for (int i = 0; i < BATCH; i++) {
        if (i > 0) {
          sb.append(',');
        }
        int b = random.nextInt(backends);
        boolean fail = random.nextInt(100) == 0;
        sb.append("{\"namespace\":\"load\",\"pool\":\"web\",\"backend\":\"")
            .append(IntakeHarness.ip(b))
            .append(":8080\",\"status\":")
            .append(fail ? 503 : 200)
            .append(",\"origin\":\"upstream\",\"latencyMs\":")
            .append(1 + random.nextInt(40))
            .append('}');
      }
      out.add(Buffer.buffer(sb.append(']').toString()));
    }
    System.out.printf(
        "backends=%d body=%d bytes per %d outcomes%n", backends, out.get(0).length(), BATCH);
    return out;
  }

  private static long loopThreadId(Vertx vertx) throws Exception {
    CompletableFuture<Long> id = new CompletableFuture<>();
    vertx.getOrCreateContext().runOnContext(v -> id.complete(Thread.currentThread().getId()));
    return id.get();
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (Exception e) {
      return String.valueOf(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }
}
