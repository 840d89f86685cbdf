package dev.vigil.runtime;

import static dev.vigil.runtime.PoolViews.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.vigil.budget.BudgetShare;
import dev.vigil.budget.ClassCounts;
import dev.vigil.health.ActiveState;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.ManualTimers;
import dev.vigil.probe.ProbeLanes;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.ScheduledProbing;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The probe budget through the real {@link PoolRuntime}s, {@link ScheduledProbing} and {@link
 * ProbeBudgets}, as {@code Vigil} wires them, on one manual clock (replanned every simulated
 * second, as the operator's timer does). Probes are counted where they leave: at the prober.
 */
class ProbeBudgetWiringTest {
  private static final long INTERVAL = 1_000;
  private static final long TIMEOUT = 500;
  private static final int FALL = 3;

  private final ManualTimers timers = new ManualTimers();
  private final Map<String, AtomicLong> probesByPool = new ConcurrentHashMap<>();
  private final Set<String> refusing = ConcurrentHashMap.newKeySet();
  private final List<PoolRuntime> runtimes = new ArrayList<>();

  /** Answers at once: refused for a refusing address, else 200; counts per pool (first octets). */
  private final Prober prober =
      (ProbeTarget target, CheckSpec spec) -> {
        String pool =
            target
                .ip()
                .substring(0, target.ip().lastIndexOf('.', target.ip().lastIndexOf('.') - 1));
        probesByPool.computeIfAbsent(pool, p -> new AtomicLong()).incrementAndGet();
        return Future.succeededFuture(
            refusing.contains(target.ip())
                ? ProbeResult.fail(Reason.CONNECTION_REFUSED, "refused", 1)
                : ProbeResult.pass("200", 1));
      };

  private static HealthSettings settings(int jitter) {
    return HealthSettings.builder()
        .intervalMs(INTERVAL)
        .timeoutMs(TIMEOUT)
        .jitterPercent(jitter)
        .rise(2)
        .fall(FALL)
        .maxIntervalMs(60_000L)
        .build();
  }

  /** A pool of {@code size} backends at 10.{index}.x.y, its probes counted under "10.{index}". */
  private PoolRuntime pool(String namespace, int index, int size, HealthSettings settings) {
    PoolRuntime runtime =
        new PoolRuntime(
            new PoolKey(namespace, "pool" + index),
            timers,
            settings,
            callback ->
                new ScheduledProbing(
                    prober,
                    HealthWatcher.NONE,
                    timers,
                    new SplittableRandom(index),
                    callback,
                    ProbeLanes.SINGLE),
            pool -> {},
            TransitionSink.NONE,
            Confirmer.ALONE,
            timers::nowMillis);
    List<Member> members = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      String ip = "10." + index + "." + (i / 250) + "." + (i % 250 + 1);
      members.add(Member.of("b" + i, "uid-" + i, ip, 8080, null, null, false, false, List.of()));
    }
    runtime.update(
        settings,
        CheckSpec.builder().timeout(Duration.ofMillis(TIMEOUT)).build(),
        1,
        members,
        Map.of());
    runtimes.add(runtime);
    return runtime;
  }

  /** Advances {@code ms} in 100 ms steps, replanning at each whole second. */
  private void run(ProbeBudgets budgets, long ms) {
    for (long t = 0; t < ms; t += 100) {
      if (timers.nowMillis() % 1000 == 0) {
        budgets.replan();
      }
      timers.advance(100);
    }
  }

  private long probes(int index) {
    return probesByPool.getOrDefault("10." + index, new AtomicLong()).get();
  }

  @Test
  void aPoolAskingTenTimesTheBudgetGetsProbesWithinTwoPercentOfIt() {
    pool("shop", 1, 1_000, settings(10)); // 1,000 probes/s asked
    ProbeBudgets budgets = new ProbeBudgets(100, () -> runtimes);
    run(budgets, 30_000); // every backend decided, the stretch in force
    long before = probes(1);
    run(budgets, 100_000);
    double perSecond = (probes(1) - before) / 100.0;
    assertThat(perSecond).isCloseTo(100, within(2.0));
    assertThat(budgets.last().exceeded()).isFalse();
  }

  @Test
  void aNamespaceWithTenTimesTheBackendsGetsNoMoreThanAnEqualShareOfProbes() {
    pool("big", 1, 1_000, settings(10)); // 1,000/s asked
    pool("small", 2, 100, settings(10)); // 100/s asked
    ProbeBudgets budgets = new ProbeBudgets(200, () -> runtimes);
    run(budgets, 30_000);
    long big = probes(1);
    long small = probes(2);
    run(budgets, 100_000);
    assertThat((probes(2) - small) / 100.0).as("small: all it asks").isCloseTo(100, within(2.0));
    assertThat((probes(1) - big) / 100.0).as("big: the rest").isCloseTo(100, within(2.0));
  }

  @Test
  void reportedSuccessesMakeBackendsQuietAndAPassiveFailureMakesOneHot() {
    PoolRuntime runtime = pool("shop", 1, 4, settings(10)); // quietMinRequests 10 (the default)
    ProbeBudgets budgets = new ProbeBudgets(1_000, () -> runtimes);
    run(budgets, 5_000);
    assertThat(runtime.probeClasses()).isEqualTo(new ClassCounts(0, 0, 0, 4));
    List<OutcomeReport> ok = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ok.add(new OutcomeReport("10.1.0.1", true, Origin.UPSTREAM, 5));
      ok.add(new OutcomeReport("10.1.0.2", true, Origin.UPSTREAM, 5));
    }
    runtime.onOutcomes(ok);
    assertThat(runtime.probeClasses()).isEqualTo(new ClassCounts(0, 0, 2, 2));
    runtime.onOutcomes(List.of(new OutcomeReport("10.1.0.2", false, Origin.UPSTREAM, 5)));
    assertThat(runtime.probeClasses())
        .as("a fresh passive failure")
        .isEqualTo(new ClassCounts(1, 0, 1, 2));
    run(budgets, 2_000); // the failure is older than an interval, but within interval x 10
    assertThat(runtime.probeClasses()).isEqualTo(new ClassCounts(0, 0, 1, 3));
    run(budgets, 9_000); // the successes too are older than interval x 10 now
    assertThat(runtime.probeClasses()).isEqualTo(new ClassCounts(0, 0, 0, 4));
  }

  @Test
  void reportsTheEffectiveDetectionTimeAndEveryKillIsDownWithinIt() {
    PoolRuntime runtime = pool("shop", 1, 200, settings(0)); // 200/s asked of 40: stretch 5
    ProbeBudgets budgets = new ProbeBudgets(40, () -> runtimes);
    run(budgets, 60_000);
    BudgetShare share = runtime.view().budget();
    // the longest stretched interval (5 s) + (fall - 1) hot intervals (1 s, hot keeps its rate) +
    // the timeout
    assertThat(share.effectiveMs()).isEqualTo(5_000 + 2 * 1_000 + TIMEOUT);
    assertThat(share.wantedMs()).isEqualTo(1_000 + 2 * 1_000 + TIMEOUT);
    assertThat(share.exceeded()).isFalse();

    Random random = new Random(37);
    long worst = 0;
    for (int kill = 0; kill < 20; kill++) {
      run(budgets, random.nextInt(5_000));
      int b = 10 * kill + random.nextInt(10);
      String ip = "10.1.0." + (b + 1);
      refusing.add(ip);
      long from = timers.nowMillis();
      long reported = runtime.view().budget().effectiveMs(); // what status shows at the kill
      while (state(runtime, "b" + b) != ActiveState.DOWN) {
        assertThat(timers.nowMillis() - from)
            .as("b%d killed %d ms ago, not Down", b, timers.nowMillis() - from)
            .isLessThanOrEqualTo(reported);
        run(budgets, 100);
      }
      worst = Math.max(worst, timers.nowMillis() - from);
    }
    assertThat(worst)
        .as("the stretch is real: a kill took longer than wanted")
        .isGreaterThan(share.wantedMs());
  }
}
