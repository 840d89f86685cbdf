package dev.vigil.bench;

import static dev.vigil.bench.OperatorLoadBench.log;
import static dev.vigil.bench.OperatorLoadBench.readyCount;
import static dev.vigil.bench.OperatorLoadBench.waitUntil;
import static dev.vigil.testing.PoolOwners.shardOf;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.e2e.AuditLog;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.PoolOwners;
import dev.vigil.testing.ProcStat;
import dev.vigil.testing.SliceFlaps;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The operator load run at several replicas (issue 16's benchmark) on the real control plane of
 * e2e/: every replica is a separate JVM ({@code dev.vigil.cli.Main operator}, the chart's settings,
 * authenticated with the chart's ServiceAccount token, its own free ports), the backends are an
 * {@link AddressFarm} in a test host, and writes are counted from the API server's audit log. One
 * run:
 *
 * <ol>
 *   <li>one replica (sharding off, as the chart runs {@code replicaCount: 1}) with P pools x B: CPU
 *       (from {@code /proc/<pid>/stat}) over a steady window, heap after a full GC;
 *   <li>R sharded replicas with R x P pools x B: the same per replica, the pools each owns, the
 *       leader's sharder thread; capacity = the backends the R replicas would carry at the single
 *       replica's CPU each. Both phases' windows open after the same warm-up: converged, 10 s, then
 *       until every replica's JIT compilers are quiet ({@link JitSettle}, at most {@code
 *       --settle-jit-s}); until 2026-12-05 the single replica was measured 10 s after converging,
 *       still compiling, which made its CPU per backend too high and the capacity above R (3.47x of
 *       3). A capacity above R is flagged as noise, never reported as capacity;
 *   <li>{@code kill -9} of a replica that does not lead: the time until every pool it owned is
 *       owned again ({@code status.shard} and {@code Probing=True}) and every backend of those
 *       pools has been probed again (the farm's last request times); slices watched throughout;
 *   <li>planned moves: a new replica joins (moves at the move-rate limit, for a fixed window), then
 *       one leaves gracefully (SIGTERM): the audit log's writes per pool moved, by verb and
 *       resource;
 *   <li>the bytes of one EndpointSlice watch event for a 100-endpoint slice, JSON and protobuf.
 * </ol>
 *
 * <p>CPU per 1,000 probes here divides by the probes asked (backends / interval): the replicas are
 * other processes and the address farm counts nothing. The capacity does not use it (cores and
 * backends only), and no figure of this bench is compared with a per-completed-probe one.
 *
 * <p>Prints RESULT lines and one JSON line. Run with {@code bench/shard-load.sh}.
 */
public final class ShardLoadBench {
  private static final long TICKS_PER_SECOND = 100; // Linux USER_HZ (getconf CLK_TCK)

  private final Map<String, String> a;
  private final int pools;
  private final int perPool;
  private final long interval;
  private final int replicas;
  private final int steadyS;
  private final double settleJitS;
  private final String leaseNs;
  private final List<Process> children = new ArrayList<>();
  private final Map<String, Object> json = new LinkedHashMap<>();
  private KubernetesClient client;
  private String ns;
  private String leaseName;

  private ShardLoadBench(Map<String, String> a) {
    this.a = a;
    pools = Integer.parseInt(a.getOrDefault("pools", "100"));
    perPool = Integer.parseInt(a.getOrDefault("per-pool", "10"));
    interval = Long.parseLong(a.getOrDefault("interval-ms", "10000"));
    replicas = Integer.parseInt(a.getOrDefault("replicas", "3"));
    steadyS = Integer.parseInt(a.getOrDefault("steady-s", "30"));
    settleJitS = Double.parseDouble(a.getOrDefault("settle-jit-s", "90"));
    leaseNs = a.getOrDefault("lease-namespace", "vigil-system");
  }

  public static void main(String[] args) throws Exception {
    ShardLoadBench bench = new ShardLoadBench(OperatorLoadBench.parse(args));
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> bench.children.forEach(Process::destroyForcibly)));
    try {
      bench.run();
    } finally {
      bench.children.forEach(Process::destroyForcibly);
    }
    System.exit(0);
  }

  /** A replica: its OS process and its shard name. */
  private record Replica(String name, Process process) {
    long pid() {
      return process.pid();
    }
  }

  private void run() throws Exception {
    int total = pools * replicas;
    int n = total * perPool;
    Farm farm = Farm.addresses(n, a.getOrDefault("netns", "vigil-h1"), children);
    Api api = Api.real(a.get("kubeconfig"), a.get("audit-log"));
    AuditLog audit = new AuditLog(Path.of(a.get("audit-log")));
    client = api.client();
    ns = api.namespace();
    leaseName = ns; // the leader Lease, and the ring: one per run, so runs never meet
    log("namespace %s, farm of %d backends", ns, n);
    client.resource(Fixtures.policy(ns, "bench", interval + "ms", interval / 2 + "ms")).create();
    OperatorLoadBench.createPools(client, api, farm, ns, 0, pools, perPool, true);
    json.put("pools_per_replica", pools);
    json.put("per_pool", perPool);
    json.put("interval_ms", interval);
    json.put("replicas", replicas);
    json.put("steady_s", steadyS);

    // 1. one replica, sharding off (the chart with replicaCount: 1)
    Replica single = launch("single", false);
    long t0 = System.currentTimeMillis();
    int n1 = pools * perPool;
    waitUntil(() -> readyCount(client, ns) == n1, 300, "all " + n1 + " backends ready");
    log("one replica: %d backends ready after %.1f s", n1, since(t0));
    json.put("single_jit_settle_s", warmUp(List.of(single)));
    Map<Long, double[]> cpu1 = steady(List.of(single));
    double c1 = cpu1.get(single.pid())[0];
    double heap1 = heapMb(single.pid());
    json.put("single_cpu_cores", c1);
    json.put("single_jit_cpu_s", cpu1.get(single.pid())[2]);
    json.put("single_cpu_s_per_1000_probes", c1 / (n1 * 1000.0 / interval) * 1000);
    json.put("single_heap_mb", heap1);
    log(
        "RESULT one replica, %d pools x %d: CPU %.3f cores (%.3f CPU s per 1,000 probes asked), heap after GC %.1f MB",
        pools, perPool, c1, c1 / (n1 * 1000.0 / interval) * 1000, heap1);
    stopGracefully(single);

    // 2. R sharded replicas, R x the pools
    OperatorLoadBench.createPools(client, api, farm, ns, pools, total, perPool, true);
    Map<String, Replica> live = new LinkedHashMap<>();
    for (int r = 1; r <= replicas; r++) {
      Replica rep = launch(ns + "-r" + r, true);
      live.put(rep.name(), rep);
    }
    t0 = System.currentTimeMillis();
    waitUntil(
        () -> settled(live.keySet()) && readyCount(client, ns) == n,
        300,
        "every pool owned and all " + n + " backends ready");
    log(
        "%d replicas: %d pools owned, %d backends ready after %.1f s",
        replicas, total, n, since(t0));
    json.put("jit_settle_s", warmUp(live.values()));
    long steadyMark = audit.mark();
    Map<Long, double[]> cpu3 = steady(live.values());
    long steadyWrites = audit.writesSince(steadyMark, ns).size();
    long leaseWrites = audit.writesSince(steadyMark, leaseNs).size();
    String leader = leader();
    Map<String, Long> owned = owners();
    double capacity = 0;
    double cpuSum = 0;
    List<String> per = new ArrayList<>();
    List<Double> heaps = new ArrayList<>();
    for (Replica rep : live.values()) {
      long b = owned.getOrDefault(rep.name(), 0L) * perPool;
      double[] c = cpu3.get(rep.pid());
      double heap = heapMb(rep.pid());
      heaps.add(heap);
      cpuSum += c[0];
      capacity += b * c1 / c[0];
      per.add(
          String.format(
              "%s%s: %d pools, %d backends, CPU %.3f cores (%.3f s per 1,000 probes asked), shard thread %.4f cores, heap %.1f MB",
              rep.name(),
              rep.name().equals(leader) ? " (leader)" : "",
              b / perPool,
              b,
              c[0],
              c[0] / (b * 1000.0 / interval) * 1000,
              c[1],
              heap));
    }
    per.forEach(p -> log("RESULT   %s", p));
    double ratio = capacity / n1;
    String noise = capacityNoise(ratio, replicas);
    Replica lead = live.get(leader);
    double leaderShard = lead == null ? -1 : cpu3.get(lead.pid())[1];
    double otherShard =
        live.values().stream()
            .filter(r -> !r.name().equals(leader))
            .mapToDouble(r -> cpu3.get(r.pid())[1])
            .average()
            .orElse(0);
    double leaderPerBackend =
        lead == null ? 0 : cpu3.get(lead.pid())[0] / owned.getOrDefault(leader, 1L) / perPool;
    double otherPerBackend =
        live.values().stream()
            .filter(r -> !r.name().equals(leader))
            .mapToDouble(r -> cpu3.get(r.pid())[0] / owned.getOrDefault(r.name(), 1L) / perPool)
            .average()
            .orElse(0);
    List<Long> spread = new ArrayList<>(owned.values());
    json.put("pools_owned", spread);
    json.put("replica_cpu_cores", live.values().stream().map(r -> cpu3.get(r.pid())[0]).toList());
    json.put("replica_heap_mb", heaps);
    json.put("replica_jit_cpu_s", live.values().stream().map(r -> cpu3.get(r.pid())[2]).toList());
    json.put("total_cpu_cores", cpuSum);
    json.put("cpu_s_per_1000_probes", cpuSum / (n * 1000.0 / interval) * 1000);
    json.put("capacity_ratio", ratio);
    json.put("capacity_above_replicas", !noise.isEmpty());
    json.put("sharder_thread_cores", leaderShard - otherShard);
    json.put("leader_extra_cpu_per_backend_pct", (leaderPerBackend / otherPerBackend - 1) * 100);
    json.put("steady_writes", steadyWrites);
    json.put("lease_writes_per_s", leaseWrites / (double) steadyS);
    log(
        "RESULT %d replicas, %d pools x %d: pools per replica %s; CPU %.3f cores in all (%.3f s per 1,000 probes asked); capacity at the single replica's CPU each: %.0f backends = %.2fx one replica%s; sharder (leader's shard thread minus the others') %.4f cores; leader CPU per backend %+.0f %% vs the others; %d writes in %d s steady in the pools' namespace, %.2f/s to Leases",
        replicas,
        total,
        perPool,
        spread,
        cpuSum,
        cpuSum / (n * 1000.0 / interval) * 1000,
        capacity,
        ratio,
        noise,
        leaderShard - otherShard,
        (leaderPerBackend / otherPerBackend - 1) * 100,
        steadyWrites,
        steadyS,
        leaseWrites / (double) steadyS);

    // 3. kill -9 of a replica that does not lead
    SliceFlaps flaps = new SliceFlaps(client, ns);
    Replica victim =
        live.values().stream().filter(r -> !r.name().equals(leader)).findFirst().orElseThrow();
    List<BackendPool> victimPools =
        pools().stream().filter(p -> victim.name().equals(shardOf(p))).toList();
    Set<String> victimNames =
        victimPools.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
    String idx =
        victimPools.stream()
            .map(p -> Integer.parseInt(p.getMetadata().getName().substring("pool-".length())))
            .map(p -> (p * perPool) + "-" + (p * perPool + perPool - 1))
            .collect(Collectors.joining(","));
    long kill = System.currentTimeMillis();
    victim.process().destroyForcibly(); // SIGKILL
    live.remove(victim.name());
    long ownedAt = -1;
    long probedAt = -1;
    while (System.currentTimeMillis() - kill < 120_000 && (ownedAt < 0 || probedAt < 0)) {
      long now = System.currentTimeMillis();
      if (ownedAt < 0
          && pools().stream()
              .filter(p -> victimNames.contains(p.getMetadata().getName()))
              .allMatch(p -> live.containsKey(shardOf(p)) && probing(p))) {
        ownedAt = now;
      }
      if (probedAt < 0 && Farm.number(farm.control("oldest " + idx), "oldest") > kill) {
        probedAt = now;
      }
      Thread.sleep(250);
    }
    if (ownedAt < 0 || probedAt < 0) {
      throw new IllegalStateException(
          "the killed replica's pools were not taken over within 120 s (owned "
              + ownedAt
              + ", probed "
              + probedAt
              + ")");
    }
    double takeover = (Math.max(ownedAt, probedAt) - kill) / 1000.0;
    waitUntil(() -> settled(live.keySet()), 120, "the survivors settled");
    json.put("killed_pools", victimPools.size());
    json.put("takeover_owned_s", (ownedAt - kill) / 1000.0);
    json.put("takeover_probed_s", (probedAt - kill) / 1000.0);
    json.put("takeover_s", takeover);
    json.put("flaps_after_kill", flaps.seen().size());
    log(
        "RESULT kill -9 %s (%d pools): owned again (status.shard, Probing=True) after %.1f s, every backend probed again after %.1f s: takeover %.1f s; slice flaps %d %s",
        victim.name(),
        victimPools.size(),
        (ownedAt - kill) / 1000.0,
        (probedAt - kill) / 1000.0,
        takeover,
        flaps.seen().size(),
        flaps.seen().stream().limit(5).toList());

    // 4a. planned moves: a new replica joins; moves at the rate limit for a fixed window
    int joinS = Integer.parseInt(a.getOrDefault("join-s", "60"));
    long joinMark = audit.mark();
    Replica joined = launch(ns + "-r" + (replicas + 1), true);
    live.put(joined.name(), joined);
    Thread.sleep(joinS * 1000L);
    List<BackendPool> moved =
        pools().stream()
            .filter(p -> joined.name().equals(shardOf(p)))
            .filter(p -> p.getStatus() != null && joined.name().equals(p.getStatus().getShard()))
            .toList();
    Moves join = moves(audit.writesSince(joinMark, ns), moved);
    json.put("join_moved", moved.size());
    json.put("join_writes_per_move", join.perMove());
    json.put("join_writes", join.kinds());
    json.put("join_other_writes", join.others());
    log(
        "RESULT a replica joins: %d pools moved to it in %d s; API writes per pool moved %.2f: %s; other writes in the window: %s",
        moved.size(), joinS, join.perMove(), join.kinds(), join.others());

    // 4b. a replica that does not lead leaves gracefully (SIGTERM): its pools move at once
    Replica leaving =
        live.values().stream()
            .filter(r -> !r.name().equals(leader) && !r.name().equals(joined.name()))
            .findFirst()
            .orElseThrow();
    List<BackendPool> itsPools =
        pools().stream().filter(p -> leaving.name().equals(shardOf(p))).toList();
    long leaveMark = audit.mark();
    long leave = System.currentTimeMillis();
    live.remove(leaving.name());
    stopGracefully(leaving);
    waitUntil(() -> settled(live.keySet()), 120, "the pools of the replica that left owned");
    double leaveS = since(leave);
    Set<String> itsNames =
        itsPools.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
    Moves left =
        moves(
            audit.writesSince(leaveMark, ns),
            pools().stream().filter(p -> itsNames.contains(p.getMetadata().getName())).toList());
    json.put("leave_moved", itsPools.size());
    json.put("leave_s", leaveS);
    json.put("leave_writes_per_move", left.perMove());
    json.put("leave_writes", left.kinds());
    json.put("leave_other_writes", left.others());
    json.put("flaps", flaps.seen().size());
    flaps.close();
    log(
        "RESULT a replica leaves (SIGTERM): its %d pools owned again after %.1f s; API writes per pool moved %.2f: %s; other writes: %s; slice flaps since the kill %d",
        itsPools.size(), leaveS, left.perMove(), left.kinds(), left.others(), flaps.seen().size());

    // 5. watch bytes of one change of a 100-endpoint slice
    watchBytes();

    System.out.println(
        "JSON " + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(json));
    live.values().forEach(r -> r.process().destroyForcibly());
    farm.control("quit");
    api.close();
  }

  /**
   * "" for a capacity R replicas can give, else the flag that says it is noise: a sharded replica
   * does at least a single replica's work per backend (plus its share of sharding), so more than R
   * times one replica means the baseline or the windows did not measure the steady state.
   */
  static String capacityNoise(double ratio, int replicas) {
    return ratio > replicas
        ? String.format(
            " (NOISE: above %d replicas, more than %d replicas can give; not a capacity)",
            replicas, replicas)
        : "";
  }

  /**
   * The warm-up both phases share before their steady window: 10 s after converging, then until
   * every replica's JIT compilers are quiet (at most {@code --settle-jit-s}). Returns the seconds
   * that took after the 10 s (negative: not quiet within the limit).
   */
  private double warmUp(java.util.Collection<Replica> reps) throws InterruptedException {
    Thread.sleep(10_000);
    if (settleJitS <= 0) {
      return 0;
    }
    double waited = JitSettle.awaitProcesses(reps.stream().map(Replica::pid).toList(), settleJitS);
    log(
        "JIT compilers of %d replica(s) %s after %.0f s more",
        reps.size(), waited >= 0 ? "quiet" : "still busy", Math.abs(waited));
    return waited;
  }

  /** Writes per moved pool, by "verb resource", and the window's writes on anything else. */
  private record Moves(double perMove, Map<String, Long> kinds, Map<String, Long> others) {}

  private static Moves moves(List<AuditLog.Call> writes, List<BackendPool> moved) {
    Set<String> names =
        moved.stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
    Map<String, Long> kinds = new TreeMap<>();
    Map<String, Long> others = new TreeMap<>();
    long count = 0;
    for (AuditLog.Call c : writes) {
      String kind = c.verb() + " " + c.resource() + (c.code() >= 300 ? " " + c.code() : "");
      if (c.resource().startsWith("backendpools") && names.contains(c.name())) {
        kinds.merge(kind, 1L, Long::sum);
        count++;
      } else {
        others.merge(kind, 1L, Long::sum);
      }
    }
    return new Moves(moved.isEmpty() ? -1 : count / (double) moved.size(), kinds, others);
  }

  private Replica launch(String name, boolean sharded) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add("java");
    cmd.addAll(List.of(a.getOrDefault("replica-java-opts", "-Xmx384m").split("\\s+")));
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            "dev.vigil.cli.Main",
            "operator",
            "--namespaces",
            ns,
            "--metrics-port",
            "0",
            "--health-port",
            "0",
            "--outcome-port",
            "-1",
            "--lease-name",
            leaseName,
            "--lease-namespace",
            leaseNs,
            "--sharding",
            Boolean.toString(sharded),
            "--shard-identity",
            name,
            "--shard-ring",
            ns,
            "--shard-lease-duration",
            a.getOrDefault("lease-s", "15"),
            "--shard-move-rate",
            a.getOrDefault("move-rate", "10")));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("KUBECONFIG", a.get("replica-kubeconfig"));
    pb.environment().put("HOSTNAME", name); // the leader election's identity
    pb.environment().put("POD_NAME", name);
    File logFile = new File(a.getOrDefault("out", "/tmp"), "replica-" + name + ".log");
    pb.redirectErrorStream(true).redirectOutput(logFile);
    Process p = pb.start();
    children.add(p);
    log("started replica %s (pid %d, sharding %s), log %s", name, p.pid(), sharded, logFile);
    return new Replica(name, p);
  }

  private static void stopGracefully(Replica r) throws InterruptedException {
    r.process().destroy(); // SIGTERM: the shutdown hook stops probing and releases the Leases
    if (!r.process().waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
      r.process().destroyForcibly();
    }
  }

  /**
   * CPU of each process over the steady window: [the whole process in cores, its threads named
   * {@code vigil-shard} (shard Lease renewal; the sharder's rounds on the leader) in cores, its JIT
   * compiler threads in CPU seconds (what compiling still cost inside the window)].
   */
  private Map<Long, double[]> steady(java.util.Collection<Replica> reps) throws Exception {
    Map<Long, long[]> before = new HashMap<>();
    for (Replica r : reps) {
      before.put(r.pid(), ticks(r.pid()));
    }
    long start = System.nanoTime();
    Thread.sleep(steadyS * 1000L);
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<Long, double[]> out = new HashMap<>();
    for (Replica r : reps) {
      if (!r.process().isAlive()) {
        throw new IllegalStateException("replica " + r.name() + " died; see its log");
      }
      long[] b = before.get(r.pid());
      long[] e = ticks(r.pid());
      out.put(
          r.pid(),
          new double[] {
            (e[0] - b[0]) / (double) TICKS_PER_SECOND / seconds,
            (e[1] - b[1]) / (double) TICKS_PER_SECOND / seconds,
            (e[2] - b[2]) / (double) TICKS_PER_SECOND
          });
    }
    return out;
  }

  /**
   * utime + stime of the process, of its threads named vigil-shard and of its C1/C2 compiler
   * threads, in clock ticks.
   */
  private static long[] ticks(long pid) throws IOException {
    long shard = 0;
    long jit = 0;
    File[] tasks = new File("/proc/" + pid + "/task").listFiles();
    if (tasks != null) {
      for (File t : tasks) {
        try {
          String comm = Files.readString(t.toPath().resolve("comm")).trim();
          if (comm.equals("vigil-shard")) {
            shard += statTicks(t.toPath().resolve("stat"));
          } else if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
            jit += statTicks(t.toPath().resolve("stat"));
          }
        } catch (IOException gone) {
          // the thread ended
        }
      }
    }
    return new long[] {statTicks(Path.of("/proc/" + pid + "/stat")), shard, jit};
  }

  private static long statTicks(Path stat) throws IOException {
    return ProcStat.read(stat).cpuTicks();
  }

  /** Heap in use after a full GC, MB ({@code jcmd GC.run}, then {@code GC.heap_info}). */
  private static double heapMb(long pid) throws Exception {
    jcmd(pid, "GC.run");
    String info = jcmd(pid, "GC.heap_info");
    long kb = 0;
    for (String line : info.split("\n")) {
      if (line.contains("Metaspace") || line.contains("class space")) {
        continue;
      }
      Matcher m = Pattern.compile("used (\\d+)K").matcher(line);
      if (m.find() && (line.contains("heap") || line.contains("generation"))) {
        kb += Long.parseLong(m.group(1));
      }
    }
    return kb / 1024.0;
  }

  private static String jcmd(long pid, String command) throws Exception {
    Process p = new ProcessBuilder("jcmd", Long.toString(pid), command).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS);
    return out;
  }

  private List<BackendPool> pools() {
    return client.resources(BackendPool.class).inNamespace(ns).list().getItems();
  }

  private static boolean probing(BackendPool p) {
    if (p.getStatus() == null || p.getStatus().getConditions() == null) {
      return false;
    }
    for (Condition c : p.getStatus().getConditions()) {
      if (c.getType().equals(Conditions.PROBING)) {
        return "True".equals(c.getStatus()) && shardOf(p).equals(p.getStatus().getShard());
      }
    }
    return false;
  }

  private boolean settled(Set<String> live) {
    return PoolOwners.settled(pools(), live);
  }

  private Map<String, Long> owners() {
    return PoolOwners.owners(pools());
  }

  private String leader() {
    var lease = client.leases().inNamespace(leaseNs).withName(leaseName).get();
    return lease == null ? "" : lease.getSpec().getHolderIdentity();
  }

  /**
   * The bytes one watcher receives for one change of a 100-endpoint EndpointSlice (one endpoint
   * turns not ready), in JSON and in protobuf (what kube-proxy asks for): a copy of one of the
   * run's Vigil slices, widened to 100 endpoints, under another Service name.
   */
  private void watchBytes() throws Exception {
    EndpointSlice vigil =
        client.discovery().v1().endpointSlices().inNamespace(ns).list().getItems().get(0);
    EndpointSlice wide = client.getKubernetesSerialization().clone(vigil);
    wide.getMetadata().setName("watch-bytes-100");
    wide.getMetadata().setResourceVersion(null);
    wide.getMetadata().setUid(null);
    wide.getMetadata().setGenerateName(null);
    wide.getMetadata().setManagedFields(null);
    wide.getMetadata().setCreationTimestamp(null);
    wide.getMetadata().getLabels().put("kubernetes.io/service-name", "watch-bytes");
    wide.getMetadata().getLabels().put("endpointslice.kubernetes.io/managed-by", "bench");
    Endpoint first = wide.getEndpoints().get(0);
    List<Endpoint> endpoints = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      Endpoint e = client.getKubernetesSerialization().clone(first);
      e.setAddresses(List.of("198.19.250." + (i + 1)));
      if (e.getTargetRef() != null) {
        e.getTargetRef().setName("watch-bytes-" + i);
        e.getTargetRef().setUid(java.util.UUID.randomUUID().toString());
      }
      endpoints.add(e);
    }
    wide.setEndpoints(endpoints);
    client.resource(wide).create();
    EndpointSlice created =
        client.discovery().v1().endpointSlices().inNamespace(ns).withName("watch-bytes-100").get();
    Map<String, Integer> sizes = new TreeMap<>();
    for (String accept :
        List.of("application/json", "application/vnd.kubernetes.protobuf;stream=watch")) {
      String rv = created.getMetadata().getResourceVersion();
      boolean ready = accept.contains("protobuf");
      created.getEndpoints().get(0).getConditions().setReady(ready);
      created = client.resource(created).update();
      sizes.put(accept.contains("protobuf") ? "protobuf" : "json", watchEventBytes(accept, rv));
    }
    json.put("watch_event_bytes_100_endpoints", sizes);
    log(
        "RESULT one watch event of a 100-endpoint EndpointSlice (one endpoint's ready flips): %s bytes",
        sizes);
  }

  /** The bytes of the first watch event after resourceVersion {@code rv} of that slice. */
  private int watchEventBytes(String accept, String rv) throws Exception {
    String server = a.get("api-server");
    String token = Files.readString(Path.of(a.get("token-file"))).trim();
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(Path.of(a.get("ca-file")))) {
      trust.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, tmf.getTrustManagers(), null);
    HttpClient http = HttpClient.newBuilder().sslContext(tls).build();
    URI uri =
        URI.create(
            server
                + "/apis/discovery.k8s.io/v1/namespaces/"
                + ns
                + "/endpointslices?watch=1&resourceVersion="
                + rv
                + "&fieldSelector="
                + URLEncoder.encode("metadata.name=watch-bytes-100", StandardCharsets.UTF_8));
    HttpResponse<InputStream> response =
        http.send(
            HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + token)
                .header("Accept", accept)
                .timeout(Duration.ofSeconds(20))
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream body = response.body()) {
      if (accept.contains("protobuf")) {
        int length = new DataInputStream(body).readInt(); // each frame: 4-byte length, message
        return 4 + length;
      }
      int bytes = 0;
      for (int c; (c = body.read()) != -1; ) {
        bytes++;
        if (c == '\n') {
          break;
        }
      }
      return bytes;
    }
  }

  private static double since(long t0) {
    return (System.currentTimeMillis() - t0) / 1000.0;
  }
}
