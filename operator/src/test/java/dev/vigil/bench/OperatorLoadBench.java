package dev.vigil.bench;

import dev.vigil.OperatorConfig;
import dev.vigil.StartOptions;
import dev.vigil.Vigil;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Load run of the whole operator (issue 4): P pools of B backends served by the bench farm
 * (bench/harness/farm.py, a separate process, 127.2.x.y:8080), the embedded API server in a
 * separate JVM, the operator alone in this JVM. Measures steady-state API writes, operator CPU and
 * heap, and for K backends killed at once (one per pool) the time from the fatal probe (the
 * transition time the runtime records as the backend's {@code since}) to the slice update seen by a
 * watch, and the API writes per transition. Run with {@code bench/operator-load.sh}.
 *
 * <p>CPU per 1,000 probes divides by the probes the operator completed in the window (its own
 * {@code vigil_probes} counter), as {@code ProbeLoadRun}'s probe-only baseline does; until
 * 2026-12-05 it divided by the nominal rate (backends / interval), so a prober that fell behind
 * looked cheaper per probe than the baseline it is compared with.
 */
public final class OperatorLoadBench {
  private static String ns = "bench";

  private OperatorLoadBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = parse(args);
    int pools = Integer.parseInt(a.getOrDefault("pools", "1000"));
    int perPool = Integer.parseInt(a.getOrDefault("per-pool", "10"));
    long interval = Long.parseLong(a.getOrDefault("interval-ms", "2000"));
    // issue 14: a policy with active.fastInterval (0 = none); the timeout then stays below it
    long fast = Long.parseLong(a.getOrDefault("fast-interval-ms", "0"));
    int kills = Integer.parseInt(a.getOrDefault("kills", "100"));
    int steadyS = Integer.parseInt(a.getOrDefault("steady-s", "60"));
    int ctlPort = Integer.parseInt(a.getOrDefault("ctl-port", "19997"));
    String farmDir = a.getOrDefault("farm-dir", "bench/harness");
    double apiQps =
        Double.parseDouble(a.getOrDefault("api-qps", "" + OperatorConfig.DEFAULT_API_QPS));
    int apiBurst =
        Integer.parseInt(a.getOrDefault("api-burst", "" + OperatorConfig.DEFAULT_API_BURST));
    int n = pools * perPool;
    List<Process> children = new ArrayList<>();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> children.forEach(Process::destroyForcibly)));

    String kubeconfig = a.get("kubeconfig");
    Farm farm =
        kubeconfig == null
            ? Farm.python(farmDir, n, ctlPort, children)
            : Farm.addresses(n, a.getOrDefault("netns", "vigil-h1"), children);
    Api api = kubeconfig == null ? Api.mock(children) : Api.real(kubeconfig, a.get("audit-log"));
    KubernetesClient client = api.client();
    ns = api.namespace();
    log("api server at %s, farm of %d backends", client.getMasterUrl(), n);
    createObjects(client, api, farm, pools, perPool, interval, fast);
    log("created %d pools, %d pods", pools, n);

    // the transport the operator runs on by default (Vigil.main: Netty's epoll when available)
    boolean nativeTransport = Boolean.parseBoolean(a.getOrDefault("native", "true"));
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(nativeTransport));
    log("network transport: %s", vertx.isNativeTransportEnabled() ? "epoll" : "NIO");
    long t0 = System.currentTimeMillis();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Vigil.Running operator =
        Vigil.start(
            StartOptions.of(
                    OperatorConfig.embedded(
                        "--namespaces=" + ns,
                        "--outcome-port=-1",
                        "--api-qps=" + apiQps,
                        "--api-burst=" + apiBurst),
                    client,
                    vertx)
                .meters(registry));
    waitUntil(() -> readyCount(client) == n, 900, "all " + n + " backends ready in slices");
    double convergeS = (System.currentTimeMillis() - t0) / 1000.0;
    log("converged: all %d backends ready after %.1f s", n, convergeS);

    Thread.sleep(10_000);
    double jitSettleS =
        JitSettle.await(Double.parseDouble(a.getOrDefault("settle-jit-s", "0")), m -> log("%s", m));
    double jit0 = JitSettle.compilerCpuSeconds();
    Profiler profiler = Profiler.into(a.get("profile"));
    Map<String, Long> w0 = api.stats();
    farm.control("reset-stats");
    profiler.start();
    double probes0 = completedProbes(registry);
    long cpu0 = cpuNanos();
    Thread.sleep(steadyS * 1000L);
    Map<String, Long> w1 = api.stats();
    long cpu1 = cpuNanos();
    long completed = Math.round(completedProbes(registry) - probes0);
    double jitCpuS = JitSettle.compilerCpuSeconds() - jit0;
    long steadyWrites = total(w1) - total(w0);
    double probeRate = Farm.number(farm.control("stats"), "req_per_s");
    profiler.stop("steady");
    double steadyCpuPerSec = (cpu1 - cpu0) / 1e9 / steadyS;
    double probesPerSec = n * 1000.0 / interval; // asked; the CPU figure divides by completed
    double cpuPer1000 = cpuPer1000Probes((cpu1 - cpu0) / 1e9, completed);
    System.gc();
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();

    Map<String, Long> killedAt = new ConcurrentHashMap<>();
    Set<String> killedIps = ConcurrentHashMap.newKeySet();
    StringBuilder idx = new StringBuilder();
    for (int k = 0; k < kills; k++) {
      int i = k * perPool;
      killedIps.add(farm.ip(i));
      idx.append(idx.length() > 0 ? "," : "").append(i);
    }
    Watch watch =
        client
            .discovery()
            .v1()
            .endpointSlices()
            .inNamespace(ns)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, EndpointSlice slice) {
                    long now = System.currentTimeMillis();
                    for (Endpoint e : slice.getEndpoints()) {
                      String addr = e.getAddresses().get(0);
                      if (killedIps.contains(addr)
                          && !Boolean.TRUE.equals(e.getConditions().getReady())) {
                        killedAt.putIfAbsent(addr, now);
                      }
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                });
    Map<String, Long> k0 = api.stats();
    long cpuK0 = cpuNanos();
    profiler.start();
    long killedAtMs = System.currentTimeMillis();
    farm.control("set refuse " + idx);
    waitUntil(() -> killedAt.size() == kills, 300, "all killed backends seen not ready");
    Thread.sleep(5_000);
    Map<String, Long> k1 = api.stats();
    long cpuK1 = cpuNanos();
    profiler.stop("kill");
    watch.close();

    // The transition time as the runtime recorded it (the fatal probe), not the coalesced status.
    List<Long> latencies = new ArrayList<>();
    List<Long> detections = new ArrayList<>();
    for (int k = 0; k < kills; k++) {
      int i = k * perPool;
      var runtime = operator.runtimes().get(new dev.vigil.runtime.PoolKey(ns, "pool-" + k));
      if (runtime.isEmpty()) {
        continue;
      }
      for (var b : runtime.get().view().backends()) {
        if (b.member().id().equals("b-" + i) && killedAt.containsKey(farm.ip(i))) {
          latencies.add(killedAt.get(farm.ip(i)) - b.since());
          detections.add(b.since() - killedAtMs);
        }
      }
    }
    Collections.sort(latencies);
    Collections.sort(detections);
    long killReads = k1.getOrDefault("GET reads", 0L) - k0.getOrDefault("GET reads", 0L);
    long apiCpuMs = k1.getOrDefault("cpu_ms", 0L) - k0.getOrDefault("cpu_ms", 0L);
    long killWrites = total(k1) - total(k0) - killReads - apiCpuMs;
    long killSliceWrites = sliceWrites(k1) - sliceWrites(k0);
    long steadyReads = w1.getOrDefault("GET reads", 0L) - w0.getOrDefault("GET reads", 0L);
    steadyWrites -= steadyReads + w1.getOrDefault("cpu_ms", 0L) - w0.getOrDefault("cpu_ms", 0L);
    log(
        "RESULT pools=%d perPool=%d backends=%d interval=%dms probes/s=%.0f",
        pools, perPool, n, interval, probesPerSec);
    log(
        "RESULT steady: %d API writes in %d s (%.1f/min), operator CPU %.3f cores (%.3f CPU s per 1,000 completed probes: %d completed, %.0f asked), heap after GC %.0f MB",
        steadyWrites,
        steadyS,
        steadyWrites * 60.0 / steadyS,
        steadyCpuPerSec,
        cpuPer1000,
        completed,
        probesPerSec * steadyS,
        heap / 1e6);
    log(
        "RESULT steady probe rate (farm-counted) %.1f/s; kill -> Down detection p50 %d ms, max %d ms",
        probeRate,
        pct(detections, 50),
        detections.isEmpty() ? -1 : detections.get(detections.size() - 1));
    log(
        "RESULT kill %d backends (one per pool): fatal probe -> slice write p50 %d ms, p99 %d ms, max %d ms (n=%d)",
        kills,
        pct(latencies, 50),
        pct(latencies, 99),
        latencies.isEmpty() ? -1 : latencies.get(latencies.size() - 1),
        latencies.size());
    log(
        "RESULT writes during the kill phase: %s -> %s = %.2f per transition (slices %.2f); reads %s (all the operator's: the bench only watches in this phase); operator CPU in phase %.1f s, API server CPU %.1f s",
        k0,
        k1,
        killWrites / (double) kills,
        killSliceWrites / (double) kills,
        k1.containsKey("GET reads")
            ? Long.toString(killReads)
            : "not counted (audit log: writes only)",
        (cpuK1 - cpuK0) / 1e9,
        apiCpuMs / 1e3);
    System.out.printf(
        "JSON {\"pools\":%d,\"per_pool\":%d,\"kills\":%d,\"interval_ms\":%d,\"api_qps\":%s,"
            + "\"api_burst\":%d,\"steady_s\":%d,\"steady_writes\":%d,"
            + "\"cpu_s_per_1000_probes\":%.4f,\"probes_completed\":%d,"
            + "\"probes_per_s_asked\":%.1f,\"heap_mb\":%.0f,\"p50_ms\":%d,\"p99_ms\":%d,"
            + "\"max_ms\":%d,\"n\":%d,\"writes_per_transition\":%.3f,"
            + "\"slice_writes_per_transition\":%.3f,\"converge_s\":%.1f,"
            + "\"fast_interval_ms\":%d,\"probe_rate\":%.1f,\"detect_p50_ms\":%d,"
            + "\"detect_max_ms\":%d,\"jit_settle_s\":%.1f,\"jit_cpu_s\":%.2f}%n",
        pools,
        perPool,
        kills,
        interval,
        apiQps,
        apiBurst,
        steadyS,
        steadyWrites,
        cpuPer1000,
        completed,
        probesPerSec,
        heap / 1e6,
        pct(latencies, 50),
        pct(latencies, 99),
        latencies.isEmpty() ? -1 : latencies.get(latencies.size() - 1),
        latencies.size(),
        killWrites / (double) kills,
        killSliceWrites / (double) kills,
        convergeS,
        fast,
        probeRate,
        pct(detections, 50),
        detections.isEmpty() ? -1 : detections.get(detections.size() - 1),
        jitSettleS,
        jitCpuS);

    farm.control("quit");
    operator.stop();
    vertx.close();
    api.close();
    children.forEach(Process::destroyForcibly);
    System.exit(0);
  }

  private static void createObjects(
      KubernetesClient client, Api api, Farm farm, int pools, int perPool, long interval, long fast)
      throws InterruptedException {
    HealthPolicy policy =
        Fixtures.policy(
            ns,
            "bench",
            interval + "ms",
            (fast > 0 ? Math.min(interval, fast) : interval) / 2 + "ms");
    if (fast > 0) {
      policy.getSpec().getActive().setFastInterval(fast + "ms");
    }
    client.resource(policy).create();
    createPools(client, api, farm, ns, 0, pools, perPool, false);
  }

  /**
   * Creates pools {@code pool-from} .. {@code pool-(to-1)} of the policy {@code bench}, each with
   * {@code perPool} running Pods {@code b-i} at the farm's address i; with {@code headless}, each
   * with a headless Service of its name first (a real API server's small Service IP range holds
   * fewer ClusterIPs than the pools of a large run).
   */
  static void createPools(
      KubernetesClient client,
      Api api,
      Farm farm,
      String namespace,
      int from,
      int to,
      int perPool,
      boolean headless)
      throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    for (int p = from; p < to; p++) {
      int pp = p;
      pool.submit(
          () -> {
            for (int b = 0; b < perPool; b++) {
              int i = pp * perPool + b;
              api.createRunningPod(Fixtures.pod(namespace, "b-" + i, "p-" + pp, farm.ip(i)));
            }
            if (headless) {
              client.resource(Fixtures.headlessService(namespace, "pool-" + pp, 8080)).create();
            }
            client
                .resource(Fixtures.pool(namespace, "pool-" + pp, "bench", "p-" + pp, 8080))
                .create();
          });
    }
    pool.shutdown();
    pool.awaitTermination(30, TimeUnit.MINUTES);
  }

  private static int readyCount(KubernetesClient client) {
    return readyCount(client, ns);
  }

  /** Endpoints published ready in the namespace's EndpointSlices. */
  static int readyCount(KubernetesClient client, String namespace) {
    int ready = 0;
    for (EndpointSlice s :
        client.discovery().v1().endpointSlices().inNamespace(namespace).list().getItems()) {
      for (Endpoint e : s.getEndpoints()) {
        if (Boolean.TRUE.equals(e.getConditions().getReady())) {
          ready++;
        }
      }
    }
    return ready;
  }

  /**
   * Probes the operator completed so far: the sum of its {@code vigil_probes} counters (every
   * result, pass or fail, as {@code ProbeLoadRun} counts its completed probes).
   */
  static double completedProbes(MeterRegistry registry) {
    return registry.find("vigil_probes").counters().stream().mapToDouble(Counter::count).sum();
  }

  /** CPU seconds per 1,000 completed probes; NaN when none completed (no figure, not zero). */
  static double cpuPer1000Probes(double cpuSeconds, long completed) {
    return completed > 0 ? cpuSeconds / completed * 1000 : Double.NaN;
  }

  private static long sliceWrites(Map<String, Long> m) {
    return m.entrySet().stream()
        .filter(e -> e.getKey().endsWith("endpointslices"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  private static long total(Map<String, Long> m) {
    return m.values().stream().mapToLong(Long::longValue).sum();
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  static long pct(List<Long> sorted, int p) {
    if (sorted.isEmpty()) {
      return -1;
    }
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
  }

  interface Check {
    boolean ok() throws Exception;
  }

  static void waitUntil(Check check, int seconds, String what) throws Exception {
    long end = System.currentTimeMillis() + seconds * 1000L;
    while (System.currentTimeMillis() < end) {
      if (check.ok()) {
        return;
      }
      Thread.sleep(1000);
    }
    throw new IllegalStateException("timed out waiting for " + what);
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      m.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    return m;
  }

  static void log(String format, Object... args) {
    System.out.printf("[%s] %s%n", Instant.now(), String.format(format, args));
  }
}
