package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.budget.ProbeClass;
import dev.vigil.health.HealthSettings;
import dev.vigil.testing.OnContext;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One pool's probes over several lanes (issue 15): where backends go, where results arrive. */
class ScheduledProbingLanesTest {

  private static final CheckSpec CHECK = CheckSpec.builder().timeout(Duration.ofMillis(50)).build();

  private static HealthSettings cadence(long intervalMs) {
    return HealthSettings.builder().intervalMs(intervalMs).timeoutMs(50).jitterPercent(0).build();
  }

  /** Lanes on manual clocks, kept so the test can run one lane at a time. */
  private static final class ManualLanes implements ProbeLanes {
    final List<ManualTimers> made = new ArrayList<>();
    final int max;
    final double rate;

    ManualLanes(int max, double rate) {
      this.max = max;
      this.rate = rate;
    }

    @Override
    public int max() {
      return max;
    }

    @Override
    public double ratePerLane() {
      return rate;
    }

    @Override
    public Timers lane(int index) {
      assertThat(index).isEqualTo(made.size() + 1);
      ManualTimers t = new ManualTimers();
      made.add(t);
      return t;
    }
  }

  @Test
  void backendsFillThePoolsOwnLaneFirstThenSpreadToTheLeastLoaded() {
    ManualTimers pool = new ManualTimers();
    ManualLanes lanes = new ManualLanes(3, 10); // 10 probes/s a lane, 1 probe/s a backend
    Map<String, Integer> results = new HashMap<>();
    Map<ProbeTarget, Integer> probed = new HashMap<>();
    Prober prober =
        (target, spec) -> {
          probed.merge(target, 1, Integer::sum);
          return Future.succeededFuture(ProbeResult.pass("200", 1));
        };
    ScheduledProbing probing =
        new ScheduledProbing(
            prober,
            HealthWatcher.NONE,
            pool,
            new SplittableRandom(1),
            (id, r) -> {
              results.merge(id, 1, Integer::sum);
              return null;
            },
            lanes);
    probing.configure(CHECK, cadence(1_000));
    for (int i = 0; i < 25; i++) {
      probing.add("b" + i, new ProbeTarget("127.0.0." + (i + 1), 80), ProbeClass.NORMAL);
    }
    assertThat(probing.lanes()).isEqualTo(3);
    assertThat(lanes.made).hasSize(2);

    // the pool's own lane: the first 10 backends, probed on the pool's clock only
    pool.advance(1_000);
    assertThat(probed).hasSize(10);
    assertThat(results.keySet()).hasSize(10).allMatch(id -> Integer.parseInt(id.substring(1)) < 10);
    // lane 1 filled to the rate first (b10-b19), lane 2 took the rest (b20-b24)
    lanes.made.get(0).advance(1_000);
    assertThat(probed).hasSize(20);
    lanes.made.get(1).advance(1_000);
    assertThat(probed).hasSize(25);
    assertThat(results).hasSize(25).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));

    // a removed backend of another lane: its later results never reach the pool
    probing.remove("b22");
    lanes.made.get(1).advance(1_000);
    assertThat(results.get("b22")).isEqualTo(1);
    assertThat(results.get("b23")).isEqualTo(2);
    // the next new backend goes to the least loaded lane (lane 2: 4 backends)
    probing.add("late", new ProbeTarget("127.0.1.1", 80), ProbeClass.NORMAL);
    lanes.made.get(1).advance(1_000);
    assertThat(results).containsKey("late");
  }

  @Test
  void aPoolWithinTheRateStaysOnItsOwnContext() {
    ManualTimers pool = new ManualTimers();
    ManualLanes lanes = new ManualLanes(4, 2_000);
    ScheduledProbing probing =
        new ScheduledProbing(
            (t, s) -> Future.succeededFuture(ProbeResult.pass("200", 1)),
            HealthWatcher.NONE,
            pool,
            new SplittableRandom(1),
            (id, r) -> null,
            lanes);
    probing.configure(CHECK, cadence(1_000));
    for (int i = 0; i < 2_000; i++) {
      probing.add(
          "b" + i,
          new ProbeTarget("127.0." + (i / 250) + "." + (i % 250 + 1), 80),
          ProbeClass.NORMAL);
    }
    assertThat(probing.lanes()).isEqualTo(1);
    assertThat(lanes.made).isEmpty();
    probing.add("one-more", new ProbeTarget("127.1.0.1", 80), ProbeClass.NORMAL);
    assertThat(probing.lanes()).as("2,001 probes/s: a second lane").isEqualTo(2);
  }

  @Test
  void onRealEventLoopsLanesProbeOnOtherThreadsAndResultsArriveOnThePoolsContext()
      throws Exception {
    Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(4));
    try {
      Context poolContext = ((VertxInternal) vertx).createEventLoopContext();
      Map<ProbeTarget, Set<Thread>> probeThreads = new ConcurrentHashMap<>();
      List<String> wrongContext = new CopyOnWriteArrayList<>();
      Map<String, AtomicInteger> results = new ConcurrentHashMap<>();
      Prober prober =
          (target, spec) -> {
            probeThreads
                .computeIfAbsent(target, t -> ConcurrentHashMap.newKeySet())
                .add(Thread.currentThread());
            return Future.succeededFuture(ProbeResult.pass("200", 1));
          };
      ScheduledProbing probing =
          new ScheduledProbing(
              prober,
              HealthWatcher.NONE,
              new VertxTimers(poolContext),
              new SplittableRandom(3),
              (id, r) -> {
                if (Vertx.currentContext() != poolContext) {
                  wrongContext.add(id + " on " + Thread.currentThread().getName());
                }
                results.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                return null;
              },
              new VertxProbeLanes(poolContext, 2, 50)); // 10 probes/s a backend: 5 per lane
      OnContext.run(
          poolContext,
          () -> {
            probing.configure(CHECK, cadence(100));
            for (int i = 0; i < 20; i++) {
              probing.add("b" + i, new ProbeTarget("127.0.0." + (i + 1), 80), ProbeClass.NORMAL);
            }
          });
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (System.nanoTime() < until
          && (results.size() < 20 || results.values().stream().anyMatch(n -> n.get() < 3))) {
        Thread.sleep(20);
      }
      assertThat(results).hasSize(20);
      assertThat(wrongContext).isEmpty();
      assertThat(probing.lanes()).isEqualTo(2);
      Set<Thread> threads = ConcurrentHashMap.newKeySet();
      probeThreads.values().forEach(threads::addAll);
      assertThat(threads).as("probes on two event loops").hasSize(2);
      assertThat(probeThreads.values()).as("each backend on one lane").allMatch(s -> s.size() == 1);

      OnContext.run(poolContext, probing::close);
      Thread.sleep(250);
      Map<String, Integer> after = new HashMap<>();
      results.forEach((id, n) -> after.put(id, n.get()));
      Thread.sleep(400);
      results.forEach(
          (id, n) -> assertThat(n.get()).as(id + " after close").isEqualTo(after.get(id)));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
