package dev.vigil.probe.load;

import com.sun.management.OperatingSystemMXBean;
import dev.vigil.bench.Heap;
import dev.vigil.bench.JitSettle;
import dev.vigil.bench.ProbeHeap;
import dev.vigil.budget.BudgetPlan;
import dev.vigil.budget.ClassCounts;
import dev.vigil.budget.DetectionTime;
import dev.vigil.budget.PoolDemand;
import dev.vigil.budget.ProbeBudget;
import dev.vigil.budget.ProbeClass;
import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.ScheduledProbing;
import dev.vigil.probe.VertxProbeLanes;
import dev.vigil.probe.VertxTimers;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.testing.OnContext;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.internal.VertxInternal;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Load run of the HTTP prober and the scheduler against a farm of loopback backends (see {@code
 * bench/probe-load.sh}). Probes every backend of a {@code farm.py} backends file at the given
 * interval, measures one steady window (probes/s, process CPU per 1,000 probes, heap and RSS growth
 * per backend, gaps between a backend's probe starts) and serves the set it would publish
 * (rise/fall applied) at {@code GET /healthy} for {@code bench_checker.py --checker external}.
 * Stops by itself after {@code --run-s}.
 *
 * <p>The backends run as the operator runs a pool's: {@code --pools} {@link ScheduledProbing}s
 * (default 1) on their own contexts, each with up to {@code --lanes} lanes (default: the cores) of
 * {@code --lane-rate} probes/s ({@link VertxProbeLanes}), on Vert.x's default event loops unless
 * {@code --loops}.
 *
 * <p>Arguments: {@code --backends FILE --interval-ms 1000 --timeout-ms 1000 --jitter 10 --reuse
 * false --warmup-s 10 --measure-s 30 --run-s 120 --rise 2 --fall 3 --debug-port 18081 --out FILE
 * --native false --pools 1 --lanes 0 --lane-rate 5000 --loops 0 --budget 0 --max-interval-ms 0}
 * ({@code --budget}: the probe budget, issue 37; see {@code BudgetLoop}).
 */
public final class ProbeLoadRun {

  private final Map<String, String> args;
  private final List<ProbeTarget> targets = new ArrayList<>();
  private final boolean[] up;
  private final int[] passRun;
  private final int[] failRun;
  private final long[] lastStartNanos;
  private final boolean[] decided;
  private final ProbeClass[] classes; // what each backend's scheduler was last told
  // Recorded from the first probe on, not only in the window: a recorder that switched on when the
  // window opened took a branch the JIT had never seen, and the deoptimization and recompiling of
  // the prober's hot path (0.1-0.6 CPU s) landed in the window. The window's figures are the
  // differences between its start and its end. The gaps go round a buffer sized for the window,
  // allocated before the heap's baseline and kept to the end, so it is in neither heap figure.
  private long[] gaps;
  private int gapCount;
  private boolean recordingGaps = true;
  private final LongAdder completed = new LongAdder();
  private final LongAdder started = new LongAdder();
  // per ProbeResult reason, by ordinal: the bench's bookkeeping kept off maps and boxing, as it
  // runs in the measured process for every probe
  private final LongAdder[] reasons = newAdders(Reason.values().length);

  private final int rise;
  private final int fall;

  private ProbeLoadRun(Map<String, String> args) throws IOException {
    this.args = args;
    this.rise = Integer.parseInt(args.get("rise"));
    this.fall = Integer.parseInt(args.get("fall"));
    for (String line : Files.readAllLines(Path.of(args.get("backends")))) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 3) {
        targets.add(new ProbeTarget(f[1], Integer.parseInt(f[2])));
      }
    }
    up = new boolean[targets.size()];
    passRun = new int[targets.size()];
    failRun = new int[targets.size()];
    lastStartNanos = new long[targets.size()];
    decided = new boolean[targets.size()];
    classes = new ProbeClass[targets.size()];
    java.util.Arrays.fill(classes, ProbeClass.NORMAL);
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = new HashMap<>();
    a.put("interval-ms", "1000");
    a.put("timeout-ms", "1000");
    a.put("jitter", "10");
    a.put("reuse", "false");
    a.put("warmup-s", "10");
    a.put("measure-s", "30");
    a.put("settle-jit-s", "0");
    a.put("run-s", "120");
    a.put("rise", "2");
    a.put("fall", "3");
    a.put("debug-port", "18081");
    a.put("native", "false");
    a.put("loops", "0");
    a.put("pools", "1");
    a.put("lanes", "0");
    a.put("lane-rate", Double.toString(VertxProbeLanes.DEFAULT_RATE_PER_LANE));
    a.put("budget", "0"); // probes/s; > 0: the probe budget stretches as the operator's does
    a.put("max-interval-ms", "0"); // 0: the policy default (10 x interval, at most 5 min)
    for (int i = 0; i + 1 < argv.length; i += 2) {
      a.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
    }
    new ProbeLoadRun(a).run();
  }

  private long num(String key) {
    return Long.parseLong(args.get(key));
  }

  private void run() throws Exception {
    int n = targets.size();
    VertxOptions options =
        new VertxOptions()
            .setWorkerPoolSize(1)
            .setPreferNativeTransport(Boolean.parseBoolean(args.get("native")));
    if (num("loops") > 0) {
      options.setEventLoopPoolSize((int) num("loops"));
    }
    Vertx vertx = Vertx.vertx(options); // as the operator: 2 x cores event loops unless --loops
    log("transport: %s", vertx.isNativeTransportEnabled() ? "native (epoll)" : "NIO");
    // --pools pools on their own contexts (round-robin over the event loops, as the operator's
    // pools are), each a ScheduledProbing with up to --lanes lanes (docs/design.md §6, issue 15)
    int pools = (int) num("pools");
    int lanes = num("lanes") > 0 ? (int) num("lanes") : Runtime.getRuntime().availableProcessors();
    List<Context> contexts = new ArrayList<>();
    for (int p = 0; p < pools; p++) {
      contexts.add(((VertxInternal) vertx).createEventLoopContext());
    }
    Context context = contexts.get(0);
    HttpProber http = new HttpProber(vertx);
    CheckSpec spec =
        CheckSpec.builder()
            .timeout(Duration.ofMillis(num("timeout-ms")))
            .reuseConnection(Boolean.parseBoolean(args.get("reuse")))
            .build();
    // only the cadence is taken from these; the probe's timeout is the CheckSpec's (which, as in
    // HAProxy's settings, may equal the interval; a policy keeps it below)
    HealthSettings cadence =
        HealthSettings.builder()
            .intervalMs(num("interval-ms"))
            .timeoutMs(Math.min(num("timeout-ms"), num("interval-ms") - 1))
            .jitterPercent((int) num("jitter"))
            .build();
    List<ScheduledProbing> probings = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(1);
    for (Context c : contexts) {
      ScheduledProbing probing =
          new ScheduledProbing(
              new StartRecorder(http),
              HealthWatcher.NONE,
              new VertxTimers(c),
              random.split(),
              (id, result) -> onResult(Integer.parseInt(id), result),
              new VertxProbeLanes(c, lanes, Double.parseDouble(args.get("lane-rate"))));
      OnContext.run(c, () -> probing.configure(spec, cadence));
      probings.add(probing);
    }
    vertx
        .createHttpServer(new HttpServerOptions().setHost("127.0.0.1"))
        .requestHandler(req -> req.response().end(healthy()))
        .listen((int) num("debug-port"))
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);

    warmUp(context, http, spec);
    synchronized (this) {
      gaps =
          new long[(int) Math.max(1 << 16, n * 1.5 * num("measure-s") * 1000 / num("interval-ms"))];
    }
    // VIGIL_HIST=1: the class histogram's growth from here to the end reading (bench/README.md)
    Map<String, long[]> histogram0 =
        System.getenv("VIGIL_HIST") == null ? null : ProbeHeap.histogram();
    long used0 = usedHeapAfterGc();
    long heap0 = Heap.liveAfterGc();
    long rss0 = rssKb();
    for (int p = 0; p < pools; p++) {
      ScheduledProbing probing = probings.get(p);
      int first = p;
      OnContext.run(
          contexts.get(p),
          () -> {
            for (int i = first; i < n; i += pools) {
              probing.add(Integer.toString(i), targets.get(i), ProbeClass.NORMAL);
            }
          });
    }
    log(
        "added %d backends in %d pools, interval %d ms, jitter %s %%, reuse %s, lanes %s",
        n,
        pools,
        num("interval-ms"),
        args.get("jitter"),
        args.get("reuse"),
        probings.stream().map(pr -> Integer.toString(pr.lanes())).toList());

    BudgetLoop budget = new BudgetLoop(vertx, probings, cadence);
    Thread.sleep(num("warmup-s") * 1000);
    double jitSettleS = JitSettle.await(num("settle-jit-s"), m -> log("%s", m));
    double jit0 = JitSettle.compilerCpuSeconds();
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    synchronized (this) {
      gapCount = 0;
    }
    long started0 = started.sum();
    long completed0 = completed.sum();
    long[] reasons0 = sums(reasons);
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    Thread.sleep(num("measure-s") * 1000);
    long cpu1 = os.getProcessCpuTime();
    long startedInWindow = started.sum() - started0;
    long completedInWindow = completed.sum() - completed0;
    Map<String, Long> reasonsInWindow = new java.util.TreeMap<>();
    long[] reasons1 = sums(reasons);
    for (Reason r : Reason.values()) {
      long inWindow = reasons1[r.ordinal()] - reasons0[r.ordinal()];
      if (inWindow > 0) {
        reasonsInWindow.put(r.name(), inWindow);
      }
    }
    double jitCpuS = JitSettle.compilerCpuSeconds() - jit0;
    long t1 = System.nanoTime();
    double seconds = (t1 - t0) / 1e9;
    double expected = n * 1000.0 / num("interval-ms");
    long[] g;
    synchronized (this) {
      g = Arrays.copyOf(gaps, Math.min(gapCount, gaps.length));
      recordingGaps = false;
    }
    Arrays.sort(g);
    long[] dev = new long[g.length];
    for (int i = 0; i < g.length; i++) {
      dev[i] = Math.abs(g[i] - num("interval-ms") * 1000);
    }
    Arrays.sort(dev);
    double gapP1 = pct(g, 0.01) / 1000.0;
    double gapP50 = pct(g, 0.50) / 1000.0;
    double gapP99 = pct(g, 0.99) / 1000.0;
    double devP50 = pct(dev, 0.50) / 1000.0;
    double devP99 = pct(dev, 0.99) / 1000.0;
    g = null;
    dev = null;
    long used1 = usedHeapAfterGc();
    long heap1 = Heap.liveAfterGc();
    if (histogram0 != null) {
      ProbeHeap.printTop(histogram0, ProbeHeap.histogram(), n, 15);
    }
    long rss1 = rssKb();

    String json =
        String.format(
            "{\"n\":%d,\"reuse\":%s,\"interval_ms\":%d,\"timeout_ms\":%d,\"jitter_pct\":%s,"
                + "\"window_s\":%.1f,\"probes_started\":%d,\"probes_completed\":%d,"
                + "\"probes_per_s\":%.1f,\"expected_per_s\":%.1f,\"deferred_starts\":%d,\"held_starts\":%d,"
                + "\"cpu_s\":%.3f,\"cpu_s_per_1000_probes\":%.4f,\"cores\":%.3f,"
                + "\"jit_settle_s\":%.1f,\"jit_cpu_s\":%.2f,"
                + "\"heap_growth_kb\":%d,\"heap_per_backend_b\":%d,\"heap_used_per_backend_b\":%d,"
                + "\"rss_before_kb\":%d,"
                + "\"rss_after_kb\":%d,\"rss_per_backend_b\":%d,"
                + "\"gap_ms_p1\":%.1f,\"gap_ms_p50\":%.1f,\"gap_ms_p99\":%.1f,"
                + "\"gap_dev_ms_p50\":%.1f,\"gap_dev_ms_p99\":%.1f,\"reasons\":\"%s\"}",
            n,
            args.get("reuse"),
            num("interval-ms"),
            num("timeout-ms"),
            args.get("jitter"),
            seconds,
            startedInWindow,
            completedInWindow,
            completedInWindow / seconds,
            expected,
            probings.stream().mapToLong(ScheduledProbing::deferredStarts).sum(),
            probings.stream().mapToLong(ScheduledProbing::heldStarts).sum(),
            (cpu1 - cpu0) / 1e9,
            (cpu1 - cpu0) / 1e9 / (completedInWindow / 1000.0),
            (cpu1 - cpu0) / 1e9 / seconds,
            jitSettleS,
            jitCpuS,
            (heap1 - heap0) / 1024,
            (heap1 - heap0) / n,
            (used1 - used0) / n,
            rss0,
            rss1,
            (rss1 - rss0) * 1024 / n,
            gapP1,
            gapP50,
            gapP99,
            devP50,
            devP99,
            reasonsInWindow);
    json = budget.report(json, completedInWindow / seconds);
    System.out.println(json);
    if (args.containsKey("out")) {
      Files.writeString(Path.of(args.get("out")), json + "\n");
    }
    long left = num("run-s") * 1000 - (System.nanoTime() - t0) / 1_000_000 - num("warmup-s") * 1000;
    if (left > 0) {
      log("serving /healthy for %d s more", left / 1000);
      Thread.sleep(left);
    }
    for (int p = 0; p < pools; p++) {
      OnContext.run(contexts.get(p), probings.get(p)::close);
    }
    Thread.sleep(200);
    http.close();
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /**
   * {@code --budget}: replans once a second as {@code runtime.ProbeBudgets} does, from this run's
   * own verdicts (not decided or mid-streak: hot; Down: down; else normal), and hands each pool its
   * stretch; adds the budget, the planned rate, the measured rate over the budget and the effective
   * detection time to the JSON. Nothing when {@code --budget 0}.
   */
  private final class BudgetLoop {
    private final List<ScheduledProbing> probings;
    private final HealthSettings cadence;
    private final double budget = Double.parseDouble(args.get("budget"));
    private final long maxIntervalMs;
    private volatile BudgetPlan plan;
    private volatile List<PoolDemand> demands = List.of();

    BudgetLoop(Vertx vertx, List<ScheduledProbing> probings, HealthSettings cadence) {
      this.probings = probings;
      this.cadence = cadence;
      this.maxIntervalMs =
          num("max-interval-ms") > 0
              ? num("max-interval-ms")
              : HealthSettings.defaultMaxIntervalMs(cadence.intervalMs());
      if (budget > 0) {
        replan();
        vertx.setPeriodic(1000, id -> replan());
      }
    }

    private synchronized void replan() {
      int pools = probings.size();
      int[][] counts = new int[pools][4];
      for (int i = 0; i < up.length; i++) {
        counts[i % pools][classOf(i).ordinal()]++;
      }
      List<PoolDemand> next = new ArrayList<>();
      for (int p = 0; p < pools; p++) {
        next.add(
            new PoolDemand(
                "bench",
                "pool" + p,
                new ClassCounts(counts[p][0], counts[p][1], counts[p][2], counts[p][3]),
                cadence.fastIntervalMs(),
                cadence.downIntervalMs(),
                cadence.intervalMs(),
                maxIntervalMs));
      }
      BudgetPlan planned = ProbeBudget.plan(budget, next);
      for (int p = 0; p < pools; p++) {
        probings.get(p).stretch(planned.stretches().get(p));
      }
      demands = next;
      plan = planned;
    }

    String report(String json, double measuredPerSecond) {
      if (budget <= 0) {
        return json;
      }
      BudgetPlan p = plan;
      long effective = 0;
      long wanted = 0;
      for (int i = 0; i < demands.size(); i++) {
        effective =
            Math.max(
                effective,
                DetectionTime.effectiveMs(
                    demands.get(i), p.stretches().get(i), fall, num("timeout-ms")));
        wanted = Math.max(wanted, DetectionTime.wantedMs(demands.get(i), fall, num("timeout-ms")));
      }
      return json.substring(0, json.length() - 1)
          + String.format(
              ",\"budget_per_s\":%.1f,\"demand_per_s\":%.1f,\"planned_per_s\":%.1f,"
                  + "\"probes_over_budget\":%.4f,\"budget_exceeded\":%s,"
                  + "\"effective_detection_ms\":%d,\"wanted_detection_ms\":%d,"
                  + "\"max_interval_ms\":%d}",
              budget,
              p.demand(),
              p.planned(),
              measuredPerSecond / budget,
              p.exceeded(),
              effective,
              wanted,
              maxIntervalMs);
    }
  }

  /** Records each backend's probe starts (as gaps). */
  private final class StartRecorder implements Prober {
    private final Prober delegate;
    // by identity: the scheduler hands back the instances it was given, and hashing a target's
    // address string on every probe is the bench's cost, not the prober's
    private final Map<ProbeTarget, Integer> index = new java.util.IdentityHashMap<>();

    StartRecorder(Prober delegate) {
      this.delegate = delegate;
      for (int i = 0; i < targets.size(); i++) {
        index.put(targets.get(i), i);
      }
    }

    @Override
    public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
      int i = index.get(target);
      long now = System.nanoTime();
      started.increment();
      if (lastStartNanos[i] != 0) {
        recordGap((now - lastStartNanos[i]) / 1000); // microseconds
      }
      lastStartNanos[i] = now;
      return delegate.probe(target, spec);
    }

    @Override
    public void forget(ProbeTarget target) {
      delegate.forget(target);
    }
  }

  private synchronized void recordGap(long micros) {
    if (gaps == null || !recordingGaps) {
      return; // before the backends are added (the warm-up's probes), after the window
    }
    gaps[gapCount++ % gaps.length] = micros;
  }

  /** The backend's class as the operator's runtime names it (docs/checks.md), without passive. */
  private ProbeClass classOf(int i) {
    return !decided[i] || (up[i] && failRun[i] > 0) || (!up[i] && passRun[i] > 0)
        ? ProbeClass.HOT
        : up[i] ? ProbeClass.NORMAL : ProbeClass.DOWN;
  }

  /**
   * On the pool's context: each pool's results arrive on its own context, one at a time. Returns
   * the backend's class when it changed, for its scheduler, as the operator's runtime does.
   */
  private ProbeClass onResult(int i, ProbeResult result) {
    completed.increment();
    reasons[result.reason().ordinal()].increment();
    // docs/design.md §2 rules 2 and 8, just enough to publish a healthy set for bench_checker.py
    boolean first = !decided[i];
    decided[i] = true;
    if (result.passed()) {
      failRun[i] = 0;
      if (++passRun[i] >= rise || first) {
        up[i] = true;
      }
    } else {
      passRun[i] = 0;
      if (++failRun[i] >= fall || first) {
        up[i] = false;
      }
    }
    ProbeClass c = classOf(i);
    if (c == classes[i]) {
      return null;
    }
    classes[i] = c;
    return c;
  }

  private static LongAdder[] newAdders(int n) {
    LongAdder[] adders = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      adders[i] = new LongAdder();
    }
    return adders;
  }

  private static long[] sums(LongAdder[] adders) {
    long[] sums = new long[adders.length];
    for (int i = 0; i < adders.length; i++) {
      sums[i] = adders[i].sum();
    }
    return sums;
  }

  private String healthy() {
    StringBuilder out = new StringBuilder(targets.size() * 20);
    for (int i = 0; i < targets.size(); i++) {
      if (up[i] && decided[i]) {
        out.append(targets.get(i)).append('\n');
      }
    }
    return out.toString();
  }

  /**
   * Probes the first 20 backends once each before the baseline, so what the first probes load once
   * per process (Netty's table of native error strings, classes) is not counted per backend.
   */
  private void warmUp(Context context, Prober prober, CheckSpec spec) throws Exception {
    for (ProbeTarget target : targets.subList(0, Math.min(20, targets.size()))) {
      CompletableFuture<ProbeResult> done = new CompletableFuture<>();
      context.runOnContext(v -> prober.probe(target, spec).onComplete((r, e) -> done.complete(r)));
      done.get(10, TimeUnit.SECONDS);
    }
    Thread.sleep(200);
  }

  private static long pct(long[] sorted, double p) {
    return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, p * sorted.length)];
  }

  /**
   * Used heap 100 ms after the last collection, the figure this run reported before {@link
   * Heap#liveAfterGc()}: it also counts what the event loop allocated in those 100 ms.
   */
  private static long usedHeapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static long rssKb() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  private static void log(String format, Object... values) {
    System.err.printf("[probe-load] " + format + "%n", values);
  }
}
