package dev.vigil.health.bench;

import dev.vigil.health.ActiveState;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.Backend;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.SweepReport;
import dev.vigil.health.Transition;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Per-event cost of the decision core at 100, 1,000 and 10,000 backends. Run with:
 *
 * <pre>
 * mvn -B -pl operator -Pjmh test-compile exec:exec \
 *   -Djmh.args="HealthCoreBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s"
 * </pre>
 *
 * <p>Each call goes to the next backend in turn (so the working set is the whole pool) with the
 * clock advancing 1 ms per call. "Steady" is a healthy pool (every probe passes, every request
 * succeeds); "mixed" draws results from a seeded random table (10 % probe fails, 20 % request
 * errors), so state changes, ejections, refusals, expiries and version moves all happen.
 *
 * <p>The statistical rules: "outcome with latency" is the mixed outcome on a pool with all three
 * rules on (the per-outcome counters); "sweep with statistics" refills, before each invocation and
 * outside the measurement, every backend's counters with two outcomes (5 % of backends failing and
 * slow) and measures the sweep that judges them: O(t) for the t backends with traffic, here all.
 *
 * <p>Flap damping (docs/design.md §2.1): each probe benchmark has a "Damping" twin on a pool that
 * is the same but for a {@code damping} block (the bar: within 1.5x of damping off, flat
 * from 100 to 10,000 backends). "Flapping" uses rise 1 and fall 1, so every result that disagrees
 * with the state flips it: penalties, dampings and (half-life 1 s) releases all happen on the hot
 * path.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class HealthCoreBenchmark {
  private static final int TABLE = 1 << 16;

  @Param({"100", "1000", "10000"})
  public int backends;

  private PoolHealth pool;
  private PoolHealth decayingPool; // 10 % of its backends carry a multiplier that never runs out
  private PoolHealth rulesPool; // all three statistical rules on
  private PoolHealth dampingPool; // the default pool with damping on
  private Backend[] dampingHandles;
  private PoolHealth flapPool; // rise 1, fall 1: every disagreeing result flips
  private Backend[] flapHandles;
  private PoolHealth flapDampingPool; // the same with damping on (half-life 1 s)
  private Backend[] flapDampingHandles;
  private Backend[] rulesHandles;
  private final long[] latencyTable = new long[TABLE];
  private Backend[] handles;
  private final boolean[] probeTable = new boolean[TABLE];
  private final boolean[] outcomeTable = new boolean[TABLE];
  private final Origin[] originTable = new Origin[TABLE];
  private int next;
  private int draw;
  private long now;

  @Setup(Level.Trial)
  public void setUp() {
    Random random = new Random(42);
    for (int i = 0; i < TABLE; i++) {
      probeTable[i] = random.nextInt(100) >= 10;
      outcomeTable[i] = random.nextInt(100) >= 20;
      originTable[i] = random.nextInt(3) == 0 ? Origin.LOCAL : Origin.UPSTREAM;
      latencyTable[i] = 20 + random.nextInt(80);
    }
    pool = new PoolHealth(HealthSettings.defaults());
    handles = new Backend[backends];
    now = 1_000_000;
    for (int i = 0; i < backends; i++) {
      handles[i] = pool.add("10.0." + (i >> 8) + "." + (i & 255) + ":8080");
      pool.onProbeResult(handles[i], true, now);
    }
    decayingPool = new PoolHealth(HealthSettings.defaults());
    for (int i = 0; i < backends; i++) {
      Backend b = decayingPool.add("b" + i);
      decayingPool.restore(b, ActiveState.UP, i % 10 == 0 ? Integer.MAX_VALUE / 2 : 0, 0, now);
    }
    rulesPool = new PoolHealth(RULES);
    rulesHandles = upPool(rulesPool, backends, now);
    dampingPool =
        new PoolHealth(HealthSettings.builder().damping(DampingSettings.defaults()).build());
    dampingHandles = upPool(dampingPool, backends, now);
    HealthSettings flap = HealthSettings.builder().rise(1).fall(1).build();
    flapPool = new PoolHealth(flap);
    flapHandles = upPool(flapPool, backends, now);
    flapDampingPool =
        new PoolHealth(
            flap.toBuilder().damping(new DampingSettings(1000, 3000, 750, 1_000, 10_000)).build());
    flapDampingHandles = upPool(flapDampingPool, backends, now);
  }

  private static final HealthSettings RULES =
      HealthSettings.builder()
          .successRate(new HealthSettings.SuccessRate(5, 2, 1.9, true))
          .failurePercentage(new HealthSettings.FailurePercentage(85, 5, 2, true))
          .latency(new HealthSettings.Latency(3.0, 5, 2, 200, true))
          .build();

  private static Backend[] upPool(PoolHealth p, int n, long now) {
    Backend[] out = new Backend[n];
    for (int i = 0; i < n; i++) {
      out[i] = p.add("10.1." + (i >> 8) + "." + (i & 255) + ":8080");
      p.onProbeResult(out[i], true, now);
    }
    return out;
  }

  /**
   * A pool with the three rules on whose counters are refilled before each sweep (its own state, so
   * the per-invocation setup touches no other benchmark): two outcomes per backend, every 20th
   * backend failing them slowly, so every backend qualifies and 5 % are flagged.
   */
  @State(Scope.Thread)
  public static class Statistics {
    @Param({"100", "1000", "10000"})
    public int backends;

    PoolHealth pool;
    Backend[] handles;
    long now = 1_000_000;

    @Setup(Level.Trial)
    public void setUp() {
      pool = new PoolHealth(RULES.toBuilder().consecutiveErrors(0).build());
      handles = upPool(pool, backends, now);
    }

    @Setup(Level.Invocation)
    public void refill() {
      for (int i = 0; i < handles.length; i++) {
        boolean bad = i % 20 == 0;
        for (int k = 0; k < 2; k++) {
          long latency = bad ? 900 : 20 + (i * 7 + k * 13) % 80;
          pool.onRequestOutcome(handles[i], !bad, Origin.UPSTREAM, latency, now);
        }
      }
    }
  }

  private Backend nextBackend() {
    Backend b = handles[next];
    if (++next == handles.length) {
      next = 0;
    }
    return b;
  }

  private int nextDraw() {
    return draw = (draw + 1) & (TABLE - 1);
  }

  @Benchmark
  public Transition probeResultSteady() {
    return pool.onProbeResult(nextBackend(), true, ++now);
  }

  @Benchmark
  public Transition probeResultMixed() {
    return pool.onProbeResult(nextBackend(), probeTable[nextDraw()], ++now);
  }

  @Benchmark
  public Transition probeResultSteadyDamping() {
    return dampingPool.onProbeResult(dampingHandles[advance()], true, ++now);
  }

  @Benchmark
  public Transition probeResultMixedDamping() {
    return dampingPool.onProbeResult(dampingHandles[advance()], probeTable[nextDraw()], ++now);
  }

  @Benchmark
  public Transition probeResultFlapping() {
    return flapPool.onProbeResult(flapHandles[advance()], probeTable[nextDraw()], ++now);
  }

  @Benchmark
  public Transition probeResultFlappingDamping() {
    return flapDampingPool.onProbeResult(
        flapDampingHandles[advance()], probeTable[nextDraw()], ++now);
  }

  /** The next backend index in turn (the same walk as {@link #nextBackend()}). */
  private int advance() {
    int i = next;
    if (++next == backends) {
      next = 0;
    }
    return i;
  }

  @Benchmark
  public EjectionDecision requestOutcomeSteady() {
    return pool.onRequestOutcome(nextBackend(), true, Origin.UPSTREAM, ++now);
  }

  @Benchmark
  public EjectionDecision requestOutcomeMixed() {
    int d = nextDraw();
    return pool.onRequestOutcome(nextBackend(), outcomeTable[d], originTable[d], ++now);
  }

  /** A mixed outcome with its latency on a pool with every statistical rule on: O(1). */
  @Benchmark
  public EjectionDecision requestOutcomeWithLatency() {
    int d = nextDraw();
    Backend b = rulesHandles[next];
    if (++next == rulesHandles.length) {
      next = 0;
    }
    return rulesPool.onRequestOutcome(b, outcomeTable[d], originTable[d], latencyTable[d], ++now);
  }

  /** The sweep judging every backend by the three rules (the counters refilled before each). */
  @Benchmark
  public SweepReport sweepWithStatistics(Statistics st) {
    st.now += 10_000;
    return st.pool.sweepReport(st.now);
  }

  /** A sweep when no backend has a multiplier to decay: the common case. */
  @Benchmark
  public int sweepIdle() {
    return pool.sweep(++now);
  }

  /** Snapshot when nothing changed since the last one: the cached object. */
  @Benchmark
  public AvailabilitySnapshot snapshotUnchanged() {
    return pool.snapshot();
  }

  /** One backend's verdict flips, then a snapshot: the O(n) rebuild path. */
  @Benchmark
  public AvailabilitySnapshot snapshotAfterChange() {
    Backend b = nextBackend();
    pool.setDraining(b, !b.draining());
    return pool.snapshot();
  }

  /** Sweep with 10 % of the pool carrying a multiplier: O(k) for those k backends. */
  @Benchmark
  public int sweepTenPercentDecaying() {
    return decayingPool.sweep(++now);
  }
}
