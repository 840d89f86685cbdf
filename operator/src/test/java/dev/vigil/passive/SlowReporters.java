package dev.vigil.passive;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.PemTrustOptions;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The slow-body attack on the TLS outcome intake (issue 12): {@code connections} TLS connections,
 * each authenticated as its own reporter allowed to report for the pool (the worst case: a refused
 * caller never gets its body read), each promising a 4 MiB body and sending 1 KiB every 100 ms; a
 * connection the intake answers or closes is opened again a second later. Once every attacker has
 * connected (TLS handshakes take a while on a loaded machine), one legitimate reporter (from
 * 127.0.0.1, another address than every attacker's) posts {@code requests} one-outcome batches, one
 * every 200 ms, while the attack goes on. Measured: the legitimate reporter's answers (status,
 * latency), the attackers' answers, the intake's bytes in flight and connections (sampled every 50
 * ms), and the JVM's heap (peak, the most live after a collection, and the growth of the live heap
 * under the attack: a collection before it and one while every attacker is still connected).
 *
 * <p>With {@code authorized = false} the attackers' tokens are valid but not allowed to report
 * (every Pod has such a token): they are refused before their body is read.
 */
final class SlowReporters {
  static final PoolKey POOL = new PoolKey("shop", "web");
  static final int PROMISED = 4 << 20;
  static final String LEGIT = "legit-token";

  /** What one run saw. */
  record Result(
      int connections,
      boolean authorized,
      long attackMs,
      List<Long> legitLatenciesMs,
      Map<Integer, Integer> legitStatuses,
      int legitFailures,
      Map<Integer, Integer> attackerStatuses,
      int attackerConnects,
      long maxBytesInFlight,
      int maxConnections,
      long heapPeakBytes,
      long heapLiveAfterGcBytes,
      long heapMaxBytes,
      long heapGrowthBytes) {

    long latencyPercentile(double p) {
      if (legitLatenciesMs.isEmpty()) {
        return -1;
      }
      List<Long> sorted = new ArrayList<>(legitLatenciesMs);
      Collections.sort(sorted);
      return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(p * sorted.size())));
    }

    @Override
    public String toString() {
      return String.format(
          "connections=%d authorized=%s attack ms=%d legit: requests=%d statuses=%s failures=%d"
              + " latency ms p50=%d p99=%d max=%d | attackers: connects=%d statuses=%s | intake:"
              + " max bytes in flight=%d (limit %d) max connections=%d | heap: peak=%d MiB live"
              + " after GC=%d MiB max=%d MiB growth under attack after GC=%d MiB",
          connections,
          authorized,
          attackMs,
          legitLatenciesMs.size(),
          legitStatuses,
          legitFailures,
          latencyPercentile(0.5),
          latencyPercentile(0.99),
          latencyPercentile(1.0),
          attackerConnects,
          attackerStatuses,
          maxBytesInFlight,
          IntakeLimits.defaults().maxBytesInFlight(),
          maxConnections,
          heapPeakBytes >> 20,
          heapLiveAfterGcBytes >> 20,
          heapMaxBytes >> 20,
          heapGrowthBytes >> 20);
    }
  }

  private SlowReporters() {}

  /** One run against an intake with the default limits, on its own Vert.x instances. */
  static Result run(int connections, boolean authorized, int requests) throws Exception {
    Vertx server = Vertx.vertx();
    Vertx clients = Vertx.vertx();
    IntakeHarness harness =
        new IntakeHarness(
            server, new SimpleMeterRegistry(), IntakeLimits.defaults(), System::currentTimeMillis);
    try {
      harness.pool(POOL, 3, HealthSettings.defaults());
      harness.reviewer.user(LEGIT, "system:serviceaccount:shop:envoy", "shop");
      for (int i = 0; i < connections; i++) {
        harness.reviewer.user(
            "slow-" + i, "system:serviceaccount:shop:slow-" + i, authorized ? "shop" : "elsewhere");
      }
      List<MemoryPoolMXBean> heap =
          ManagementFactory.getMemoryPoolMXBeans().stream()
              .filter(p -> p.getType() == MemoryType.HEAP)
              .toList();
      System.gc();
      long baseline = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      heap.forEach(MemoryPoolMXBean::resetPeakUsage);

      // The reporter is already reporting when the attack begins: its connection is open and its
      // token known (a batch before the attack, not counted).
      HttpClient http =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(30)) // a loaded CI machine: latency is measured
              .sslContext(TestTls.trusting())
              .build();
      report(http, harness.port);

      Map<Integer, Integer> attackerStatuses = new ConcurrentHashMap<>();
      AtomicInteger connects = new AtomicInteger();
      AtomicLong end = new AtomicLong(Long.MAX_VALUE);
      long start = System.nanoTime();
      for (int i = 0; i < connections; i++) {
        // Each sender from its own address, as Pods have theirs (127.0.1.x; the reporter is
        // 127.0.0.1): failed authentications are counted per address.
        NetClient net =
            clients.createNetClient(
                new NetClientOptions()
                    .setSsl(true)
                    .setHostnameVerificationAlgorithm("HTTPS")
                    .setTrustOptions(new PemTrustOptions().addCertPath(TestTls.caFile().toString()))
                    .setLocalAddress("127.0.1." + (i % 250 + 1))
                    .setConnectTimeout(10_000));
        attack(clients, net, harness.port, "slow-" + i, end, connects, attackerStatuses);
      }

      AtomicLong maxBytes = new AtomicLong();
      AtomicInteger maxConnections = new AtomicInteger();
      long sampler =
          server.setPeriodic(
              50,
              id -> {
                maxBytes.accumulateAndGet(harness.intake.bytesInFlight(), Math::max);
                maxConnections.accumulateAndGet(harness.intake.connections(), Math::max);
              });

      long connected = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (connects.get() < connections && System.nanoTime() < connected) {
        Thread.sleep(100);
      }
      List<Long> latencies = new ArrayList<>();
      Map<Integer, Integer> statuses = new TreeMap<>();
      int failures = 0;
      for (int n = 0; n < requests; n++) {
        long t0 = System.nanoTime();
        try {
          statuses.merge(report(http, harness.port).statusCode(), 1, Integer::sum);
          latencies.add((System.nanoTime() - t0) / 1_000_000);
        } catch (java.io.IOException e) {
          failures++;
          System.out.println("legit request " + n + " failed: " + e);
        }
        Thread.sleep(200);
      }
      // What the attack keeps alive: a collection while every slow sender is still connected.
      System.gc();
      long growth = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() - baseline;
      end.set(System.nanoTime());
      server.cancelTimer(sampler);
      long peak = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
      long live =
          heap.stream()
              .mapToLong(p -> p.getCollectionUsage() == null ? 0 : p.getCollectionUsage().getUsed())
              .sum();
      long max = Runtime.getRuntime().maxMemory();
      return new Result(
          connections,
          authorized,
          (System.nanoTime() - start) / 1_000_000,
          latencies,
          statuses,
          failures,
          new TreeMap<>(attackerStatuses),
          connects.get(),
          maxBytes.get(),
          maxConnections.get(),
          peak,
          live,
          max,
          growth);
    } finally {
      harness.close();
      IntakeHarness.await(clients.close());
      IntakeHarness.await(server.close());
    }
  }

  /** One one-outcome batch of the legitimate reporter. */
  private static HttpResponse<String> report(HttpClient http, int port)
      throws java.io.IOException, InterruptedException {
    String body = "[{\"backend\":\"" + IntakeHarness.ip(0) + ":8080\",\"ok\":true,\"status\":200}]";
    return http.send(
        HttpRequest.newBuilder(
                URI.create(
                    "https://127.0.0.1:"
                        + port
                        + OutcomeIntake.path(POOL.namespace(), POOL.name())))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + LEGIT)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** One slow sender: connects, trickles, notes the answer, and comes back until {@code end}. */
  private static void attack(
      Vertx vertx,
      NetClient net,
      int port,
      String token,
      AtomicLong end,
      AtomicInteger connects,
      Map<Integer, Integer> statuses) {
    if (System.nanoTime() >= end.get()) {
      return;
    }
    Runnable again =
        () -> vertx.setTimer(1_000, id -> attack(vertx, net, port, token, end, connects, statuses));
    net.connect(port, "127.0.0.1")
        .onFailure(e -> again.run())
        .onSuccess(
            socket -> {
              connects.incrementAndGet();
              StringBuilder head = new StringBuilder();
              boolean[] noted = {false};
              long timer =
                  vertx.setPeriodic(
                      100,
                      id -> {
                        if (System.nanoTime() >= end.get()) {
                          socket.close();
                        } else {
                          socket.write(Buffer.buffer(new byte[1024]));
                        }
                      });
              socket.handler(
                  data -> {
                    if (!noted[0] && head.length() < 64) {
                      head.append(data.toString(StandardCharsets.ISO_8859_1));
                      if (head.length() >= 12 && head.toString().startsWith("HTTP/1.1 ")) {
                        noted[0] = true;
                        statuses.merge(Integer.parseInt(head.substring(9, 12)), 1, Integer::sum);
                        socket.close();
                      }
                    }
                  });
              socket.exceptionHandler(e -> socket.close());
              socket.closeHandler(
                  v -> {
                    vertx.cancelTimer(timer);
                    if (!noted[0]) {
                      statuses.merge(0, 1, Integer::sum); // closed without an answer
                    }
                    again.run();
                  });
              writeHeaders(socket, token);
            });
  }

  private static void writeHeaders(NetSocket socket, String token) {
    socket.write(
        "POST "
            + OutcomeIntake.path(POOL.namespace(), POOL.name())
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + token
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + PROMISED
            + "\r\n\r\n[");
  }
}
