package dev.vigil.probe;

import dev.vigil.budget.ProbeClass;
import dev.vigil.budget.ProbeStretch;
import dev.vigil.health.HealthSettings;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;

/**
 * A pool's probe loops on {@link ProbeScheduler}s, results delivered on the pool's context. With
 * {@code active.grpc.watch}, also one Health/Watch stream per backend ({@link HealthWatcher}),
 * whose every streamed status goes to the same callback at once, as a probe result.
 *
 * <p>Lanes (issue 15): a pool's backends are probed on its own context until they make {@link
 * ProbeLanes#ratePerLane()} probes a second; further backends go to the least loaded of up to
 * {@link ProbeLanes#max()} lanes, each a scheduler on another event loop, so one large pool uses
 * every core as HAProxy's threads do. A backend stays on its lane until removed (its cadence is
 * never cut). Results of the other lanes come back to the pool's context in batches: one hand-off
 * per batch, not per result.
 */
public final class ScheduledProbing implements Probing {
  /** Written on the pool's context, read by metrics from any thread (a lane is added rarely). */
  private final List<LoopScheduler> lanes = new CopyOnWriteArrayList<>();

  /**
   * The backends on a lane other than the pool's own ({@code lanes.get(0)}); absent: the pool's own
   * lane. Most pools fit one lane, so most backends need no entry here.
   */
  private final Map<String, LoopScheduler> laneOf = new HashMap<>();

  private final Prober prober;
  private final ProbeLanes laneSource;
  private final RandomGenerator random;
  private final Timers timers;
  private final Results callback;

  /** Every backend's target: the one map by backend id of the pool's probing. */
  private final Map<String, ProbeTarget> targets = new HashMap<>();

  private final Map<String, ProbeTarget> members = Collections.unmodifiableMap(targets);

  /** The Watch streams and the agent checks: loops beside the probes, over the same members. */
  private final List<BackendLoops> beside;

  private CheckSpec check;
  private volatile ProbeStretch stretch = ProbeStretch.NONE;
  private ProbeSchedule schedule;

  /**
   * @param timers the pool context's timers (results arrive on that context)
   */
  public ScheduledProbing(Prober prober, Timers timers, RandomGenerator random, Results callback) {
    this(prober, HealthWatcher.NONE, timers, random, callback);
  }

  /**
   * @param watcher opens the Watch streams of {@code active.grpc.watch}
   * @param timers the pool context's timers (results arrive on that context)
   */
  public ScheduledProbing(
      Prober prober,
      HealthWatcher watcher,
      Timers timers,
      RandomGenerator random,
      Results callback) {
    this(prober, watcher, timers, random, callback, ProbeLanes.SINGLE);
  }

  /**
   * @param watcher opens the Watch streams of {@code active.grpc.watch}
   * @param timers the pool context's timers (results arrive on that context)
   * @param lanes where probes may run besides the pool's context
   */
  public ScheduledProbing(
      Prober prober,
      HealthWatcher watcher,
      Timers timers,
      RandomGenerator random,
      Results callback,
      ProbeLanes lanes) {
    this(prober, watcher, timers, random, callback, lanes, AgentProbe.NONE);
  }

  /**
   * @param agent asks the backends' agents when the check has {@code active.agent}; the answers go
   *     to {@link Results#agent} on the pool's context
   */
  public ScheduledProbing(
      Prober prober,
      HealthWatcher watcher,
      Timers timers,
      RandomGenerator random,
      Results callback,
      ProbeLanes lanes,
      AgentProbe agent) {
    this.prober = prober;
    this.laneSource = lanes;
    this.random = random;
    this.timers = timers;
    this.beside =
        List.of(
            new WatchStreams(
                watcher, timers, (id, result) -> tell(id, callback.result(id, result))),
            new AgentLoops(agent, timers, random, callback::agent));
    this.callback = callback;
    this.lanes.add(new LoopScheduler(timers, random, false));
  }

  /** A scheduler on one event loop and the backends it probes. */
  private final class LoopScheduler {
    final ProbeScheduler<String> scheduler;

    /** Results waiting for the pool's context; null on the pool's own lane. */
    final Queue<Delivery> results;

    final AtomicBoolean flushQueued = new AtomicBoolean();
    int backends;

    LoopScheduler(Timers laneTimers, RandomGenerator laneRandom, boolean remote) {
      this.results = remote ? new ConcurrentLinkedQueue<>() : null;
      this.scheduler =
          new ProbeScheduler<>(
              prober,
              laneTimers,
              laneRandom,
              remote ? this::handOver : ScheduledProbing.this::deliver);
      this.scheduler.stretch(stretch);
    }

    /** On the lane's loop: queue the result; the first of a batch schedules the flush. */
    void handOver(String id, ProbeTarget target, ProbeResult result) {
      results.add(new Delivery(id, target, result));
      if (flushQueued.compareAndSet(false, true)) {
        timers.execute(this::flush);
      }
    }

    /** On the pool's context: every result queued so far, in order. */
    void flush() {
      flushQueued.set(false);
      for (Delivery d; (d = results.poll()) != null; ) {
        deliver(d.id(), d.target(), d.result());
      }
    }
  }

  private record Delivery(String id, ProbeTarget target, ProbeResult result) {}

  private void deliver(String id, ProbeTarget target, ProbeResult result) {
    if (target.equals(targets.get(id))) {
      tell(id, callback.result(id, result));
    }
  }

  /** Passes a class the decision changed on to the backend's scheduler. */
  private void tell(String id, ProbeClass c) {
    if (c != null) {
      laneOf(id).scheduler.classify(id, c); // a scheduler ignores a backend it does not have
    }
  }

  /** The lane a member backend is on. */
  private LoopScheduler laneOf(String id) {
    LoopScheduler lane = laneOf.get(id);
    return lane == null ? lanes.get(0) : lane;
  }

  @Override
  public void classify(String id, ProbeClass c) {
    tell(id, c);
  }

  @Override
  public void stretch(ProbeStretch stretch) {
    this.stretch = stretch;
    lanes.forEach(l -> l.scheduler.stretch(stretch));
  }

  /**
   * The lane for a new backend: the pool's own while it stays within the rate per lane, else the
   * least loaded lane, or a new one when every lane is at the rate and fewer than the maximum run.
   */
  private LoopScheduler laneForNew() {
    LoopScheduler least = lanes.get(0);
    if (schedule == null || laneSource.max() == 1) {
      return least;
    }
    double rate = 1000.0 / Math.max(1, schedule.interval().toMillis());
    if ((least.backends + 1) * rate <= laneSource.ratePerLane()) {
      return least;
    }
    for (LoopScheduler l : lanes) {
      if (l.backends < least.backends) {
        least = l;
      }
    }
    if ((least.backends + 1) * rate > laneSource.ratePerLane() && lanes.size() < laneSource.max()) {
      least =
          new LoopScheduler(
              laneSource.lane(lanes.size()), new SplittableRandom(random.nextLong()), true);
      lanes.add(least);
    }
    return least;
  }

  @Override
  public int lanes() {
    return lanes.size();
  }

  @Override
  public long deferredStarts() {
    return lanes.stream().mapToLong(l -> l.scheduler.deferredStarts()).sum();
  }

  @Override
  public long heldStarts() {
    return lanes.stream().mapToLong(l -> l.scheduler.heldStarts()).sum();
  }

  @Override
  public void configure(CheckSpec check, HealthSettings cadence) {
    this.check = check;
    this.schedule =
        new ProbeSchedule(
            Duration.ofMillis(cadence.intervalMs()),
            Duration.ofMillis(cadence.fastIntervalMs()),
            Duration.ofMillis(cadence.downIntervalMs()),
            cadence.jitterPercent());
    targets.forEach((id, target) -> laneOf(id).scheduler.update(id, target, check, schedule));
    beside.forEach(loops -> loops.configure(check, members));
  }

  @Override
  public void add(String id, ProbeTarget target, ProbeClass phase) {
    LoopScheduler lane;
    if (targets.put(id, target) != null) {
      lane = laneOf(id);
    } else {
      lane = laneForNew();
      lane.backends++;
      if (lane != lanes.get(0)) {
        laneOf.put(id, lane);
      }
    }
    lane.scheduler.add(id, target, check, schedule);
    if (phase != ProbeClass.NORMAL) {
      lane.scheduler.classify(id, phase);
    }
    beside.forEach(loops -> loops.add(id, target));
  }

  @Override
  public void remove(String id) {
    if (targets.remove(id) == null) {
      return;
    }
    beside.forEach(loops -> loops.remove(id));
    LoopScheduler lane = laneOf(id);
    laneOf.remove(id);
    lane.backends--;
    lane.scheduler.remove(id);
  }

  @Override
  public void close() {
    targets.clear();
    beside.forEach(BackendLoops::close);
    laneOf.clear();
    lanes.forEach(l -> l.scheduler.stop());
  }
}
