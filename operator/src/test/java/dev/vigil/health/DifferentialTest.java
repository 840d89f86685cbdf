package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Feeds {@link PoolHealth} and the scanning {@link ReferencePool} the same seeded random events
 * over random pool sizes and settings, and compares every return value, the snapshot, the version
 * movement, counters and each backend's state after every event. Flap damping (DESIGN §2.1) is on
 * in about half the runs: every damping and release must be the same event at the same step, the
 * next release time the same, and each backend's probe phase the same. A failure names the seed
 * that replays it ({@code -Dvigil.diff.seed=...}).
 */
class DifferentialTest {
  private static final int SEQUENCES = 160;
  private static final int EVENTS_PER_SEQUENCE = 1_000;
  private static final int[] POOL_SIZES = {1, 2, 3, 4, 5, 6, 8, 10, 12, 20, 30, 50, 200};

  @Test
  void poolHealthAgreesWithTheScanningReferenceAfterEveryEvent() {
    String fixed = System.getProperty("vigil.diff.seed");
    long master = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
    Random seeds = new Random(master);
    int events = 0;
    int sweepEjections = 0;
    long dampings = 0;
    long releases = 0;
    for (int i = 0; i < (fixed != null ? 1 : SEQUENCES); i++) {
      long seed = fixed != null ? master : seeds.nextLong();
      Run run = new Run(seed);
      events += run.play();
      sweepEjections += run.sweepEjections();
      dampings += run.pool.dampings();
      releases += run.pool.releases();
    }
    assertThat(events).isGreaterThanOrEqualTo(fixed != null ? 1 : 100_000);
    if (fixed == null) {
      assertThat(sweepEjections).as("the statistical rules were exercised").isGreaterThan(100);
      assertThat(dampings).as("flap damping was exercised").isGreaterThan(200);
      assertThat(releases).as("damped backends were released").isGreaterThan(100);
    }
  }

  private static final class Run {
    private final long seed;
    private final Random r;
    private final Deque<String> log = new ArrayDeque<>();
    private HealthSettings settings;
    private final PoolHealth pool;
    private final ReferencePool ref;
    private final List<String> ids = new ArrayList<>();
    private final List<Backend> removed = new ArrayList<>();
    private long now;
    private int nextId;
    private long lastVersion;
    private int sweepEjections;
    private ReferencePool.Published lastPublished;
    private final List<String> events = new ArrayList<>();

    Run(long seed) {
      this.seed = seed;
      this.r = new Random(seed);
      this.settings = randomSettings();
      this.pool = new PoolHealth(settings);
      this.ref = new ReferencePool(settings);
      pool.dampingListener(
          new DampingListener() {
            @Override
            public void damped(Backend b) {
              events.add("damped " + b.id() + "@" + b.releaseAt());
            }

            @Override
            public void released(Backend b) {
              events.add("released " + b.id());
            }
          });
      this.now = r.nextInt(1_000_000);
    }

    int play() {
      int size = POOL_SIZES[r.nextInt(POOL_SIZES.length)];
      for (int i = 0; i < size; i++) {
        addOne();
      }
      lastVersion = pool.version();
      lastPublished = ref.published();
      compare("setup");
      for (int step = 0; step < EVENTS_PER_SEQUENCE; step++) {
        String event = step();
        compare(event);
      }
      return EVENTS_PER_SEQUENCE;
    }

    int sweepEjections() {
      return sweepEjections;
    }

    private String pick() {
      return ids.get(r.nextInt(ids.size()));
    }

    private Backend handle(String id) {
      return pool.backend(id);
    }

    private void addOne() {
      String id = "b" + nextId++;
      ids.add(id);
      pool.add(id);
      ref.add(id);
    }

    private String step() {
      int roll = r.nextInt(1000);
      if (ids.isEmpty() || roll < 20) {
        addOne();
        return "add " + ids.get(ids.size() - 1);
      }
      String id = pick();
      boolean byHandle = r.nextBoolean();
      if (roll < 380) {
        boolean pass = r.nextInt(100) < (r.nextBoolean() ? 80 : 30);
        Transition got =
            byHandle
                ? pool.onProbeResult(handle(id), pass, now)
                : pool.onProbeResult(id, pass, now);
        Transition want = ref.probe(id, pass, now);
        return check("probe " + id + " " + pass + " @" + now, got, want);
      }
      if (roll < 750) {
        // half the time a high error rate everywhere (consecutive runs), else per-backend quality
        int number = Integer.parseInt(id.substring(1));
        int okPercent = r.nextBoolean() ? 25 : (number % 5 == 0 ? 40 : 95);
        boolean ok = r.nextInt(100) < okPercent;
        Origin origin = r.nextInt(3) == 0 ? Origin.LOCAL : Origin.UPSTREAM;
        long latency =
            r.nextInt(4) == 0 ? -1 : (number % 7 == 0 ? 200 + r.nextInt(800) : r.nextInt(120));
        EjectionDecision got;
        if (latency < 0 && r.nextBoolean()) {
          got =
              byHandle
                  ? pool.onRequestOutcome(handle(id), ok, origin, now)
                  : pool.onRequestOutcome(id, ok, origin, now);
        } else {
          got =
              byHandle
                  ? pool.onRequestOutcome(handle(id), ok, origin, latency, now)
                  : pool.onRequestOutcome(id, ok, origin, latency, now);
        }
        EjectionDecision want = ref.outcome(id, ok, origin, latency, now);
        return check(
            "outcome " + id + " " + ok + " " + origin + " " + latency + "ms @" + now, got, want);
      }
      if (roll < 860) {
        now += r.nextInt(4) == 0 ? r.nextInt(20_000) : r.nextInt(500);
        return "advance to " + now;
      }
      if (roll < 900) {
        SweepReport want = ref.sweep(now);
        if (r.nextInt(4) == 0) {
          return check("sweep @" + now, pool.sweep(now), want.decayed());
        }
        SweepReport got = pool.sweepReport(now);
        sweepEjections += got.ejections().size();
        return check("sweepReport @" + now, withoutReasons(got), want);
      }
      if (roll < 920) {
        if (r.nextBoolean()) {
          pool.expireEjections(now);
        } else {
          pool.releaseDamped(now);
        }
        ref.expireEjections(now);
        return "expire @" + now;
      }
      if (roll < 945) {
        ids.remove(id);
        Backend b = handle(id);
        removed.add(b);
        boolean got = byHandle ? pool.remove(b) : pool.remove(id);
        ref.remove(id);
        return check("remove " + id, got, true);
      }
      if (roll < 975) {
        boolean value = r.nextBoolean();
        if (byHandle) {
          pool.setDraining(handle(id), value);
        } else {
          pool.setDraining(id, value);
        }
        ref.setDraining(id, value);
        return "draining " + id + " " + value;
      }
      if (roll < 982) {
        settings = randomSettings();
        pool.apply(settings);
        ref.apply(settings);
        return "apply " + settings;
      }
      if (roll < 990) {
        BackendState state = BackendState.values()[r.nextInt(3)];
        int multiplier = r.nextInt(4);
        long until = now + r.nextInt(60_000) - 20_000;
        DampingState ds =
            r.nextBoolean()
                ? DampingState.NONE
                : new DampingState(
                    r.nextInt(8_000) + r.nextDouble(), now - r.nextInt(30_000), r.nextBoolean());
        if (ds == DampingState.NONE && r.nextBoolean()) {
          pool.restore(handle(id), state, multiplier, until, now);
        } else {
          pool.restore(handle(id), state, multiplier, until, ds, now);
        }
        ref.restore(id, state, multiplier, until, ds, now);
        return "restore " + id + " " + state + " m=" + multiplier + " until=" + until + " " + ds;
      }
      if (roll < 994) {
        boolean value = r.nextBoolean();
        pool.restorePanic(value);
        ref.restorePanic(value);
        return "restorePanic " + value;
      }
      if (!removed.isEmpty()) {
        Backend stale = removed.get(r.nextInt(removed.size()));
        return check(
            "stale probe " + stale.id(),
            pool.onProbeResult(stale, false, now),
            Transition.UNCHANGED);
      }
      return "nothing";
    }

    private static SweepReport withoutReasons(SweepReport r) {
      return new SweepReport(
          r.decayed(),
          r.ejections().stream()
              .map(e -> new Ejection(e.backendId(), e.rule(), e.kind(), e.ejectedUntil(), "-"))
              .toList());
    }

    private String check(String event, Object got, Object want) {
      if (!got.equals(want)) {
        fail(event, "returned " + got + ", reference " + want);
      }
      return event;
    }

    private void compare(String event) {
      log.addLast(event);
      if (log.size() > 12) {
        log.removeFirst();
      }
      AvailabilitySnapshot s = pool.snapshot();
      ReferencePool.Published want = ref.published();
      ReferencePool.Published got =
          new ReferencePool.Published(s.panic(), s.available(), s.ready(), s.drainingServing());
      if (!got.equals(want)) {
        fail(event, "published " + got + ", reference " + want);
      }
      boolean moved = s.version() != lastVersion;
      boolean shouldMove = !want.equals(lastPublished);
      if (moved != shouldMove) {
        fail(event, "version moved=" + moved + " but published set changed=" + shouldMove);
      }
      lastVersion = s.version();
      lastPublished = want;
      if (!s.counts().equals(ref.counts())) {
        fail(event, "counts " + s.counts() + ", reference " + ref.counts());
      }
      if (pool.refusedEjections() != ref.refused
          || pool.wouldEjectCount() != ref.wouldEject
          || pool.ejections() != ref.ejections) {
        fail(event, "counters differ");
      }
      if (pool.nextEjectionEnd() != ref.nextEjectionEnd()) {
        fail(event, "nextEjectionEnd " + pool.nextEjectionEnd() + " vs " + ref.nextEjectionEnd());
      }
      List<String> gotEvents = new ArrayList<>(events);
      List<String> wantEvents = ref.takeEvents();
      events.clear();
      gotEvents.sort(null);
      wantEvents.sort(null);
      if (!gotEvents.equals(wantEvents)) {
        fail(event, "damping events " + gotEvents + ", reference " + wantEvents);
      }
      if (pool.dampings() != ref.dampings || pool.releases() != ref.releases) {
        fail(event, "damping counters differ");
      }
      if (pool.nextRelease() != ref.nextRelease()) {
        fail(event, "nextRelease " + pool.nextRelease() + " vs " + ref.nextRelease());
      }
      if (ids.size() <= 30 || r.nextInt(20) == 0) {
        for (String id : ids) {
          BackendView v = handle(id).view();
          BackendView w = ref.members.get(id).view();
          if (!v.equals(w)) {
            fail(event, "backend " + v + ", reference " + w);
          }
          if (handle(id).phase() != ref.members.get(id).phase() || v.phase() != w.phase()) {
            fail(event, "phase of " + id + " " + handle(id).phase());
          }
        }
      }
      if (pool.size() != ref.members.size()) {
        fail(event, "size " + pool.size() + " vs " + ref.members.size());
      }
    }

    private void fail(String event, String what) {
      throw new AssertionError(
          "seed "
              + seed
              + " (replay with -Dvigil.diff.seed="
              + seed
              + "): after '"
              + event
              + "': "
              + what
              + "\nsettings "
              + settings
              + "\nlast events "
              + log);
    }

    private HealthSettings randomSettings() {
      long base = 1 + r.nextInt(5_000);
      int threshold = r.nextInt(4) == 0 ? 0 : (r.nextBoolean() ? 50 : r.nextInt(101));
      int[] percents = {0, 10, 20, 34, 50, 100, r.nextInt(101)};
      return HealthSettings.builder()
          .rise(1 + r.nextInt(4))
          .fall(1 + r.nextInt(4))
          .consecutiveErrors(r.nextInt(6))
          .consecutiveLocalOriginErrors(r.nextInt(6))
          .splitLocalOrigin(r.nextBoolean())
          .baseEjectionTimeMs(base)
          .maxEjectionTimeMs(base + r.nextInt((int) base * 6))
          .maxEjectionPercent(percents[r.nextInt(percents.length)])
          .alwaysEjectOne(r.nextBoolean())
          .unejectOnActivePass(r.nextBoolean())
          .enforce(r.nextInt(10) != 0)
          .successRate(
              r.nextBoolean()
                  ? null
                  : new HealthSettings.SuccessRate(
                      1 + r.nextInt(4),
                      1 + r.nextInt(6),
                      0.3 + r.nextInt(20) / 10.0,
                      r.nextInt(5) != 0))
          .failurePercentage(
              r.nextBoolean()
                  ? null
                  : new HealthSettings.FailurePercentage(
                      r.nextInt(101), 1 + r.nextInt(4), 1 + r.nextInt(6), r.nextInt(5) != 0))
          .latency(
              r.nextBoolean()
                  ? null
                  : new HealthSettings.Latency(
                      1 + r.nextInt(40) / 10.0,
                      1 + r.nextInt(4),
                      1 + r.nextInt(4),
                      r.nextInt(300),
                      r.nextInt(5) != 0))
          .panicThresholdPercent(threshold)
          .panicExitPercent(threshold + r.nextInt(101 - threshold))
          .fastIntervalMs(r.nextBoolean() ? null : 2_001L + r.nextInt(5_000))
          .downIntervalMs(r.nextBoolean() ? null : 2_001L + r.nextInt(50_000))
          .damping(r.nextBoolean() ? null : randomDamping())
          .build();
    }

    private HealthSettings.Damping randomDamping() {
      int suppress = 1_000 + r.nextInt(2_000);
      return new HealthSettings.Damping(
          800 + r.nextInt(1_500),
          suppress,
          100 + r.nextInt(suppress - 100),
          1_000 + r.nextInt(4_000),
          1 + r.nextInt(30_000));
    }
  }
}
