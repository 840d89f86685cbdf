package dev.vigil.bench;

import com.sun.management.ThreadMXBean;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeSchedule;
import dev.vigil.probe.ProbeScheduler;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.VertxTimers;
import dev.vigil.probe.http.HttpProber;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.management.ObjectName;
import one.profiler.AsyncProfiler;

/**
 * Heap per backend of the HTTP prober and its scheduler, and bytes allocated per probe, against a
 * farm of loopback backends ({@code bench/probe-heap.sh} starts {@code farm.py} and runs this three
 * times). One event loop, interval 1 s, timeout 1 s, jitter 10 %, fresh connections unless {@code
 * reuse}. Printed per run:
 *
 * <ul>
 *   <li>live heap per backend: each heap pool's usage right after full collections ({@link
 *       Heap#liveAfterGc()}) with N backends probing, minus before any was added, divided by N;
 *   <li>"used": the same read as {@code ProbeLoadRun} read it before (used heap 100 ms after the
 *       last collection), which also counts what the event loop allocated in those 100 ms: about a
 *       tenth of the bytes allocated per probe, per backend at one probe per second;
 *   <li>the class histograms before and after (the JVM's {@code GC.class_histogram}), as growth per
 *       backend by class;
 *   <li>bytes allocated per probe: what the event loop thread allocated over the window (every
 *       timer, probe and result runs there) divided by the probes completed in it.
 * </ul>
 *
 * <p>Before the baseline, 50 backends probe for 2.5 s and are removed, so what the first probes
 * load once per process (Netty's table of native error strings, classes) is not counted per
 * backend; {@code -Dwarmup=false} counts it, as {@code ProbeLoadRun} did. {@code
 * -Dalloc.profile=FILE} writes async-profiler's allocation stacks of the window (collapsed).
 * Neither figure depends on CPU time, but a probe in flight holds its connection (about 8 KB): a
 * farm that falls behind (probes timing out, see "passed") inflates the heap figure. Not a test:
 * run it by hand with the serial collector (or {@code bench/probe-heap.sh}):
 *
 * <pre>
 * java -Xmx512m -XX:+UseSerialGC -cp CP dev.vigil.bench.ProbeHeap BACKENDS_FILE N [reuse] [WINDOW_S]
 * </pre>
 */
public final class ProbeHeap {
  private ProbeHeap() {}

  public static void main(String[] args) throws Exception {
    List<ProbeTarget> targets = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(args[0]))) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 3) {
        targets.add(new ProbeTarget(f[1], Integer.parseInt(f[2])));
      }
    }
    int n = Integer.parseInt(args[1]);
    boolean reuse = args.length > 2 && "reuse".equals(args[2]);
    int windowS = args.length > 3 ? Integer.parseInt(args[3]) : 10;
    if (targets.size() < n) {
      throw new IllegalArgumentException(args[0] + " lists " + targets.size() + " < " + n);
    }
    targets = new ArrayList<>(targets.subList(0, n));
    // keys made before the first measurement: in the operator the key is the Pod's name, which
    // its Member holds anyway
    List<Integer> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      keys.add(i);
    }

    Vertx vertx =
        Vertx.vertx(
            new VertxOptions()
                .setEventLoopPoolSize(1)
                .setWorkerPoolSize(1)
                .setPreferNativeTransport(true));
    Context context = context(vertx);
    long loopThread = threadOf(context);
    HttpProber http = new HttpProber(vertx);
    LongAdder completed = new LongAdder();
    LongAdder passed = new LongAdder();
    ProbeScheduler<Integer> scheduler =
        new ProbeScheduler<>(
            http,
            new VertxTimers(context),
            new SplittableRandom(1),
            (key, target, result) -> {
              completed.increment();
              if (result.passed()) {
                passed.increment();
              }
            });
    CheckSpec spec =
        CheckSpec.builder().timeout(Duration.ofSeconds(1)).reuseConnection(reuse).build();
    ProbeSchedule schedule = new ProbeSchedule(Duration.ofSeconds(1), 10);

    if (!"false".equals(System.getProperty("warmup"))) {
      // what the first probes load once per process (Netty's native error strings, classes, JIT
      // stubs) is not per backend: 50 backends probe for 2.5 s and go before the baseline
      int w = Math.min(50, n);
      for (int i = 0; i < w; i++) {
        scheduler.add(keys.get(i), targets.get(i), spec, schedule);
      }
      Thread.sleep(2500);
      for (int i = 0; i < w; i++) {
        scheduler.remove(keys.get(i));
      }
      Thread.sleep(1500); // the last probes and their deadline timers end
    }
    histogram(); // its own first call loads classes: not the prober's
    Map<String, long[]> before = histogram();
    long used0 = Heap.used();
    long live0 = Heap.liveAfterGc();
    for (int i = 0; i < n; i++) {
      scheduler.add(keys.get(i), targets.get(i), spec, schedule);
    }
    Thread.sleep(3000); // every backend probed at least twice: connections and parsers exist
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long alloc0 = threads.getThreadAllocatedBytes(loopThread);
    long done0 = completed.sum();
    long passed0 = passed.sum();
    AsyncProfiler profiler = allocationProfiler();
    Thread.sleep(windowS * 1000L);
    if (profiler != null) {
      profiler.execute("stop");
      profiler.execute("collapsed,total,file=" + System.getProperty("alloc.profile"));
    }
    long alloc1 = threads.getThreadAllocatedBytes(loopThread);
    long probes = completed.sum() - done0;
    long passes = passed.sum() - passed0;
    long used1 = Heap.used();
    long live1 = Heap.liveAfterGc();
    Map<String, long[]> after = histogram();

    System.out.printf(
        "%d backends, %s, warm-up %s: %.0f bytes of live heap per backend (%.0f used);"
            + " %d probes in %d s (%d passed), %.0f bytes allocated per probe on the event loop%n",
        n,
        reuse ? "reuseConnection" : "fresh connections",
        "false".equals(System.getProperty("warmup")) ? "no" : "yes",
        (live1 - live0) / (double) n,
        (used1 - used0) / (double) n,
        probes,
        windowS,
        passes,
        probes == 0 ? 0.0 : (alloc1 - alloc0) / (double) probes);
    printTop(before, after, n, Integer.getInteger("top", 15));
    scheduler.stop();
    http.close();
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    if (probes < n * windowS / 2) {
      throw new AssertionError("too few probes (" + probes + "): is the farm running?");
    }
  }

  /**
   * With {@code -Dalloc.profile=FILE}: async-profiler sampling allocations over the window, its
   * stacks (collapsed, bytes) written to FILE.
   */
  private static AsyncProfiler allocationProfiler() throws Exception {
    if (System.getProperty("alloc.profile") == null) {
      return null;
    }
    Path lib = Files.createTempFile("libasyncProfiler", ".so");
    try (InputStream in =
        AsyncProfiler.class.getResourceAsStream("/linux-x64/libasyncProfiler.so")) {
      Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
    }
    AsyncProfiler profiler = AsyncProfiler.getInstance(lib.toString());
    profiler.execute("start,event=alloc,alloc=64k");
    return profiler;
  }

  private static Context context(Vertx vertx) throws Exception {
    CompletableFuture<Context> captured = new CompletableFuture<>();
    vertx
        .deployVerticle(
            new AbstractVerticle() {
              @Override
              public void start() {
                captured.complete(context);
              }
            })
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
    return captured.get(10, TimeUnit.SECONDS);
  }

  /** The id of the thread that runs {@code context} (an event loop: always the same one). */
  private static long threadOf(Context context) throws Exception {
    CompletableFuture<Long> id = new CompletableFuture<>();
    context.runOnContext(v -> id.complete(Thread.currentThread().getId()));
    return id.get(10, TimeUnit.SECONDS);
  }

  /** Class name to {instances, bytes}, from the JVM's {@code GC.class_histogram}. */
  public static Map<String, long[]> histogram() throws Exception {
    String text =
        (String)
            ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "gcClassHistogram",
                    new Object[] {new String[0]},
                    new String[] {String[].class.getName()});
    Map<String, long[]> classes = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length >= 4 && f[0].endsWith(":")) {
        classes.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
      }
    }
    return classes;
  }

  public static void printTop(
      Map<String, long[]> before, Map<String, long[]> after, int n, int top) {
    record Growth(String name, long instances, long bytes) {}
    List<Growth> growth = new ArrayList<>();
    long total = 0;
    for (Map.Entry<String, long[]> e : after.entrySet()) {
      long[] b = before.getOrDefault(e.getKey(), new long[2]);
      long bytes = e.getValue()[1] - b[1];
      total += bytes;
      growth.add(new Growth(e.getKey(), e.getValue()[0] - b[0], bytes));
    }
    for (Map.Entry<String, long[]> e : before.entrySet()) {
      if (!after.containsKey(e.getKey())) {
        total -= e.getValue()[1];
      }
    }
    growth.sort((a, b) -> Long.compare(b.bytes(), a.bytes()));
    System.out.printf(
        "class histogram growth: %.0f bytes per backend in all%n", total / (double) n);
    System.out.printf("%12s %10s  %s%n", "B/backend", "inst/bk", "class");
    for (Growth g : growth.subList(0, Math.min(top, growth.size()))) {
      System.out.printf(
          "%12.1f %10.2f  %s%n", g.bytes() / (double) n, g.instances() / (double) n, g.name());
    }
  }
}
