package dev.vigil.bench;

import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ManualTimers;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Prober;
import dev.vigil.probe.ScheduledProbing;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.TransitionSink;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Heap per backend of a pool's runtime (decision core, {@code PoolRuntime}'s view and members, the
 * scheduler) without the prober's own (see {@link ProbeHeap}): P pools of B backends on a manual
 * clock, probed by an instant prober until every backend has results, at interval 1 s. The Pod
 * names and addresses are made before the baseline (the Pod cache holds them in the operator). Not
 * a test: run it by hand with the serial collector:
 *
 * <pre>
 * java -Xmx1g -XX:+UseSerialGC -cp CP dev.vigil.bench.RuntimeHeap 100 50
 * </pre>
 */
public final class RuntimeHeap {
  private RuntimeHeap() {}

  public static void main(String[] args) throws Exception {
    int pools = Integer.parseInt(args[0]);
    int perPool = Integer.parseInt(args[1]);
    String[][] names = new String[pools][perPool];
    String[][] ips = new String[pools][perPool];
    for (int p = 0; p < pools; p++) {
      for (int b = 0; b < perPool; b++) {
        int i = p * perPool + b;
        names[p][b] = "web-" + p + "-7d9f8c6b5-" + Integer.toString(1_000_000 + i, 36);
        ips[p][b] = "10." + (100 + i / 65536) + "." + (i / 256 % 256) + "." + (i % 256);
      }
    }
    ManualTimers timers = new ManualTimers();
    Prober instant = (target, spec) -> Future.succeededFuture(ProbeResult.pass("200", 1));
    HealthSettings settings = HealthSettings.builder().intervalMs(1_000).timeoutMs(500).build();
    CheckSpec check = CheckSpec.builder().timeout(Duration.ofMillis(500)).build();
    SplittableRandom random = new SplittableRandom(1);
    ProbeHeap.histogram(); // its own first call loads classes
    Map<String, long[]> histogramBefore = ProbeHeap.histogram();
    long before = Heap.liveAfterGc();
    List<PoolRuntime> runtimes = new ArrayList<>();
    for (int p = 0; p < pools; p++) {
      PoolRuntime r =
          new PoolRuntime(
              new PoolKey("ns", "pool-" + p),
              timers,
              settings,
              callback -> new ScheduledProbing(instant, timers, random.split(), callback),
              pool -> {},
              TransitionSink.NONE,
              Confirmer.ALONE,
              timers::nowMillis);
      List<Member> members = new ArrayList<>(perPool);
      for (int b = 0; b < perPool; b++) {
        members.add(
            Member.of(names[p][b], null, ips[p][b], 8080, null, null, false, false, List.of()));
      }
      Future<Void> updated = r.update(settings, check, 1, members, Map.of());
      if (updated.failed()) {
        throw new IllegalStateException(updated.cause());
      }
      runtimes.add(r);
    }
    timers.advance(5_000); // every backend probed about five times: up, views built
    long after = Heap.liveAfterGc();
    Map<String, long[]> histogramAfter = ProbeHeap.histogram();
    long up = runtimes.stream().mapToLong(r -> r.view().snapshot().ready().size()).sum();
    int n = pools * perPool;
    System.out.printf(
        "%d pools x %d backends (%d ready): %.0f bytes of live heap per backend%n",
        pools, perPool, up, (after - before) / (double) n);
    ProbeHeap.printTop(histogramBefore, histogramAfter, n, Integer.getInteger("top", 15));
    if (up != n) {
      throw new AssertionError("not every backend is ready: " + up + " of " + n);
    }
  }
}
