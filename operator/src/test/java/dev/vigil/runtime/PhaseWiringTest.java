package dev.vigil.runtime;

import static dev.vigil.runtime.PoolViews.state;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.ActiveState;
import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.ManualTimers;
import dev.vigil.probe.ProbeLanes;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.ScheduledProbing;
import dev.vigil.probe.Timers;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * {@code active.fastInterval} and {@code active.downInterval} through the real {@link PoolRuntime}
 * and the real {@link ScheduledProbing} (two lanes), as {@code Vigil} wires them, on one manual
 * clock: the runtime answers each result with the backend's phase when it changed ({@code
 * PoolRuntime.onProbeResult}), the probing passes it to the backend's lane ({@code
 * ScheduledProbing.tell}). Probes are counted at the prober, per backend. Unlike {@code
 * PhaseSchedulingTest}, which wires the decision core and one scheduler itself, nothing here is
 * wired by the test but the prober.
 */
class PhaseWiringTest {
  private static final long INTERVAL = 10_000;
  private static final long FAST = 1_000;
  private static final long DOWN = 30_000;
  private static final int FALL = 3;
  private static final int RISE = 2;

  private final ManualTimers timers = new ManualTimers();
  private final Map<String, Integer> probes = new ConcurrentHashMap<>();
  private final Set<String> refusing = ConcurrentHashMap.newKeySet();
  private ScheduledProbing probing;

  /** Answers at once: refused for a refusing address, else 200. */
  private final Prober prober =
      (ProbeTarget target, CheckSpec spec) -> {
        probes.merge(target.ip(), 1, Integer::sum);
        return Future.succeededFuture(
            refusing.contains(target.ip())
                ? ProbeResult.fail(Reason.CONNECTION_REFUSED, "refused", 1)
                : ProbeResult.pass("200", 1));
      };

  /** A second lane on the same clock: lane 1 takes the third backend on (0.1 probes/s each). */
  private final ProbeLanes twoLanes =
      new ProbeLanes() {
        @Override
        public int max() {
          return 2;
        }

        @Override
        public double ratePerLane() {
          return 0.2;
        }

        @Override
        public Timers lane(int index) {
          return timers;
        }
      };

  private PoolRuntime start() {
    HealthSettings settings =
        HealthSettings.builder()
            .intervalMs(INTERVAL)
            .fastIntervalMs(FAST)
            .downIntervalMs(DOWN)
            .timeoutMs(500)
            .jitterPercent(0)
            .rise(RISE)
            .fall(FALL)
            .build();
    PoolRuntime runtime =
        new PoolRuntime(
            new PoolKey("shop", "web"),
            timers,
            settings,
            callback -> {
              probing =
                  new ScheduledProbing(
                      prober,
                      HealthWatcher.NONE,
                      timers,
                      new SplittableRandom(7),
                      callback,
                      twoLanes);
              return probing;
            },
            pool -> {},
            TransitionSink.NONE,
            Confirmer.ALONE,
            timers::nowMillis);
    List<Member> members = new ArrayList<>();
    for (String id : List.of("a", "b", "c", "d")) {
      members.add(Member.of(id, "uid-" + id, ip(id), 8080, null, null, false, false, List.of()));
    }
    runtime.update(
        settings,
        CheckSpec.builder().timeout(Duration.ofMillis(500)).build(),
        1,
        members,
        Map.of());
    return runtime;
  }

  private static String ip(String id) {
    return "10.0.0." + (id.charAt(0) - 'a' + 1);
  }

  /** Advances in 100 ms steps until every backend in {@code ids} is in {@code state}: the ms. */
  private long until(PoolRuntime r, ActiveState state, long limitMs, String... ids) {
    long from = timers.nowMillis();
    while (timers.nowMillis() - from <= limitMs) {
      boolean all = true;
      for (String id : ids) {
        all &= state(r, id) == state;
      }
      if (all) {
        return timers.nowMillis() - from;
      }
      timers.advance(100);
    }
    throw new AssertionError(
        List.of(ids) + " not " + state + " within " + limitMs + " ms: " + states(r));
  }

  private Map<String, ActiveState> states(PoolRuntime r) {
    Map<String, ActiveState> out = new HashMap<>();
    for (String id : List.of("a", "b", "c", "d")) {
      out.put(id, state(r, id));
    }
    return out;
  }

  /** Probes of each backend's address while the clock advances {@code ms}. */
  private Map<String, Integer> probesOver(long ms) {
    Map<String, Integer> before = new HashMap<>(probes);
    timers.advance(ms);
    Map<String, Integer> out = new HashMap<>();
    for (String id : List.of("a", "b", "c", "d")) {
      out.put(id, probes.getOrDefault(ip(id), 0) - before.getOrDefault(ip(id), 0));
    }
    return out;
  }

  @Test
  void eachBackendIsProbedAtItsPhasesIntervalOnEitherLane() {
    PoolRuntime r = start();
    assertThat(probing.lanes()).as("a and b on the pool's lane, c and d on lane 1").isEqualTo(2);
    until(r, ActiveState.UP, 3 * INTERVAL, "a", "b", "c", "d");
    timers.advance(2 * INTERVAL);

    // Normal: one probe an interval. a (the pool's lane) and c (lane 1) start refusing.
    refusing.add(ip("a"));
    refusing.add(ip("c"));
    // the first failing probe within an interval, then fall-1 more at fastInterval; at the
    // normal interval alone it would take interval x fall (30 s)
    long detected = until(r, ActiveState.DOWN, INTERVAL * FALL, "a", "c");
    assertThat(detected)
        .as("ms to Down: interval + (fall-1) x fastInterval at most")
        .isLessThanOrEqualTo(INTERVAL + (FALL - 1) * FAST);

    // Down: one probe a downInterval (4 in 120 s), the healthy ones still one an interval
    Map<String, Integer> down = probesOver(4 * DOWN);
    assertThat(down.get("a")).as("probes of a, Down, in 120 s").isBetween(3, 5);
    assertThat(down.get("c")).as("probes of c, Down, in 120 s").isBetween(3, 5);
    assertThat(down.get("b")).as("probes of b, Up, in 120 s").isBetween(11, 13);
    assertThat(down.get("d")).as("probes of d, Up, in 120 s").isBetween(11, 13);

    // Recovery: the first pass within a downInterval, then rise-1 more at fastInterval
    refusing.clear();
    long recovered = until(r, ActiveState.UP, 2 * DOWN, "a", "c");
    assertThat(recovered)
        .as("ms to Up: downInterval + (rise-1) x fastInterval at most")
        .isLessThanOrEqualTo(DOWN + (RISE - 1) * FAST);

    // Up again: back to one probe an interval (not fastInterval, not downInterval)
    timers.advance(INTERVAL);
    Map<String, Integer> up = probesOver(10 * INTERVAL);
    assertThat(up)
        .allSatisfy((id, n) -> assertThat(n).as("probes of %s, Up, in 100 s", id).isBetween(9, 11));
  }
}
