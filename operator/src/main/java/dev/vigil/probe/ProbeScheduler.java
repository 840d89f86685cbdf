package dev.vigil.probe;

import dev.vigil.budget.ProbeClass;
import dev.vigil.budget.ProbeStretch;
import io.vertx.core.AsyncResult;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.random.RandomGenerator;

/**
 * Probes many backends, each on its own fixed cadence.
 *
 * <ul>
 *   <li>One timer per scheduler, not per backend: the planned starts wait in a {@link StartQueue}
 *       and the timer is armed for the earliest, so a backend costs its own small state and a slot
 *       in that queue (issue 15: heap per backend). Each probe starts interval +/- {@code
 *       jitterPercent} after the previous one started (not after it ended), and the first at a
 *       random offset in [0, interval), so thousands of backends never probe in one burst, and a
 *       hanging backend at fall 3, interval 1 s, timeout 1 s is down within about 3 intervals + 1
 *       timeout.
 *   <li>The cadence is kept on planned start times: a late timer does not push later probes back; a
 *       backend more than one interval behind restarts its cadence from now.
 *   <li>Starts due within a few milliseconds share one wake-up: when the timer fires, every start
 *       due within {@link ProbeSchedule#early} (a quarter of the jitter, at most {@value
 *       ProbeSchedule#MAX_EARLY_MS} ms, none without jitter) is taken at once; planned waits are
 *       drawn from the jitter band narrowed by as much, so gaps between actual starts stay within
 *       interval +/- jitter (issue 15: at 1,000 probes/s the event loop slept and woke 1.4 times
 *       per probe, HAProxy 0.66).
 *   <li>Never two probes of one backend at once: if the previous probe is still in flight when the
 *       next is due (only possible when jitter makes a wait shorter than the timeout, or with
 *       timeout = interval as HAProxy-style settings have it), the start is deferred to the moment
 *       that probe ends (at the latest its deadline), counted in {@link #deferredStarts()}. No
 *       start is ever dropped, so a hanging backend keeps being probed on cadence.
 *   <li>No more than {@link #MAX_BACKLOG} probes started on one event loop within the last {@value
 *       #BACKLOG_WINDOW_MS} ms wait for their answer ({@link Backlog}, shared by every scheduler on
 *       the loop: all pools and lanes there); a start due beyond that waits, oldest first, until
 *       one is answered or leaves the window, and its timeout counts from its actual start; counted
 *       in {@link #heldStarts()}. Healthy probes answer within a millisecond or two, so this only
 *       binds when the event loop or the machine cannot keep up. Then, as HAProxy's checks (each
 *       starts an interval after the previous one ended), probing slows down to what the loop
 *       completes instead of starting more than it can answer and marking healthy backends down on
 *       its own timeouts (issue 15's ramp: at 20,000 probes/s on 2 cores, 62,746 of 98,639 probes
 *       timed out and 3,427 of 5,000 backends were not UP without it). A hanging backend holds a
 *       place for the window only, not for its whole timeout.
 *   <li>{@link #add}, {@link #update}, {@link #remove} and {@link #stop} may be called from any
 *       thread; the work runs on the {@link Timers} context, and so does the listener. A removed
 *       backend's timer is cancelled, its in-flight result dropped, and the prober told to {@link
 *       Prober#forget} it (closing a kept connection).
 *   <li>Classes (docs/design.md §1 {@code fastInterval}, {@code downInterval}, §9): the runtime
 *       names each backend's {@link ProbeClass} after every result and {@link #classify} passes it
 *       on; the wait before the next start is the class's interval, stretched by the pool's share
 *       of the probe budget ({@link #stretch}), +/- jitter, counted from the last start. A class
 *       change re-plans the next start from the last start (at once when that moment has passed),
 *       so switching class neither loses the cadence nor ever starts a second probe while one is in
 *       flight; a change to a longer interval (a class or the budget's stretch) spreads the next
 *       starts over it ({@link Cadence}), so phases that were close do not turn into bursts.
 * </ul>
 *
 * @param <K> the backend key (for example pool and pod)
 */
public final class ProbeScheduler<K> {

  /** How long a started probe counts towards the backlog ({@link Backlog}). */
  static final long BACKLOG_WINDOW_MS = 100;

  /**
   * Unanswered probes started within {@link #BACKLOG_WINDOW_MS} before further starts wait: 2,560
   * starts a second that all go unanswered for 100 ms. The ramp on 2 cores (nginx farm, 5,000
   * backends at 250 ms) sustained 18,000 probes/s with every backend UP at a limit of 200 (the
   * whole in-flight count then), and 14,900/s with 334 timeouts at 1,000.
   */
  public static final int MAX_BACKLOG = 256;

  private final Prober prober;
  private final Timers timers;
  private final RandomGenerator random;
  private final ProbeListener<K> listener;
  private final Map<K, Backend> backends = new ConcurrentHashMap<>();
  private final StartQueue starts = new StartQueue();
  private final Backlog backlog;
  private int heldHere; // this scheduler's backends waiting in the backlog's line
  private long timerId = -1;
  private long timerDue = Long.MAX_VALUE;
  private boolean dispatching;
  private volatile boolean stopped;
  private volatile long deferred; // one writer (the timers' context), read by metrics
  private volatile long heldStarts; // likewise
  private volatile ProbeStretch stretch = ProbeStretch.NONE; // set by the budget, any thread

  public ProbeScheduler(
      Prober prober, Timers timers, RandomGenerator random, ProbeListener<K> listener) {
    this(prober, timers, random, listener, timers.backlog());
  }

  /** With a backlog of its own choosing instead of its loop's (tests). */
  ProbeScheduler(
      Prober prober,
      Timers timers,
      RandomGenerator random,
      ProbeListener<K> listener,
      Backlog backlog) {
    this.prober = prober;
    this.timers = timers;
    this.random = random;
    this.listener = listener;
    this.backlog = backlog;
  }

  /** Starts probing a backend; an existing backend with this key is updated instead. */
  public void add(K key, ProbeTarget target, CheckSpec spec, ProbeSchedule schedule) {
    schedule.checkTimeout(spec.timeout());
    timers.execute(() -> upsert(key, target, spec, schedule));
  }

  /**
   * Changes a backend's target, check or cadence. The probe in flight finishes with the old
   * settings; a new interval takes effect from the last start. Adds the backend if absent.
   */
  public void update(K key, ProbeTarget target, CheckSpec spec, ProbeSchedule schedule) {
    add(key, target, spec, schedule);
  }

  /**
   * Sets how far each class's interval stretches under the probe budget (docs/design.md §9); from
   * any thread. When a class's stretch changes by more than a twentieth, its backends' next starts
   * are planned again ({@link Cadence#planStretch}), O(backends); a smaller change applies from
   * each next planned start on.
   */
  public void stretch(ProbeStretch stretch) {
    ProbeStretch before = this.stretch;
    this.stretch = stretch;
    if (Cadence.changed(before, stretch)) {
      timers.execute(() -> replan(before, stretch));
    }
  }

  private void replan(ProbeStretch before, ProbeStretch after) {
    long now = timers.nowMillis();
    for (Backend b : backends.values()) {
      if (!b.retired && b.planStretch(before, after, now, random)) {
        b.rearm(Math.max(0, b.plannedStart - now));
      }
    }
  }

  /**
   * Sets a backend's class: its next start moves to the last start plus the new phase's interval
   * (jittered), or to now if that has passed; to a random moment before that when the new interval
   * is longer ({@link Cadence}); the first probe of a new backend keeps its random offset. Nothing
   * changes when the class is the same or the backend is unknown.
   */
  public void classify(K key, ProbeClass phase) {
    timers.execute(
        () -> {
          Backend b = backends.get(key);
          if (b == null || b.retired || b.phase == phase) {
            return;
          }
          long now = timers.nowMillis();
          if (b.planClass(phase, now, stretch, random)) {
            b.rearm(Math.max(0, b.plannedStart - now));
          }
        });
  }

  /** Stops probing a backend; a result still in flight is dropped. */
  public void remove(K key) {
    timers.execute(
        () -> {
          Backend b = backends.remove(key);
          if (b != null) {
            retire(b);
          }
        });
  }

  /** Stops everything: cancels every timer, drops results in flight. Idempotent. */
  public void stop() {
    stopped = true;
    timers.execute(
        () -> {
          backends.values().forEach(this::retire);
          backends.clear();
        });
  }

  /** Backends being probed. */
  public int size() {
    return backends.size();
  }

  /** Probe starts deferred because the previous probe of that backend was still in flight. */
  public long deferredStarts() {
    return deferred;
  }

  /**
   * Probe starts of this scheduler that waited because {@link #MAX_BACKLOG} probes of its event
   * loop were unanswered (the loop or the machine did not keep up), including a due start merged
   * into one already waiting.
   */
  public long heldStarts() {
    return heldStarts;
  }

  private void upsert(K key, ProbeTarget target, CheckSpec spec, ProbeSchedule schedule) {
    if (stopped) {
      return;
    }
    Backend b = backends.get(key);
    long now = timers.nowMillis();
    if (b == null) {
      b = new Backend(key, target, spec, schedule);
      backends.put(key, b);
      b.planFirst(now, random);
      b.arm(b.plannedStart - now);
      return;
    }
    if (!b.target.equals(target)) {
      prober.forget(b.target);
    }
    b.target = target;
    b.spec = spec;
    if (b.planSchedule(schedule, now, stretch, random)) {
      b.rearm(Math.max(0, b.plannedStart - now));
    }
  }

  private void retire(Backend b) {
    b.retired = true;
    b.disarm();
    prober.forget(b.target);
  }

  /**
   * Keeps the one timer armed for the earliest planned start: cancelled when nothing is queued,
   * moved when an earlier start was queued. A timer left armed for a start that was taken out fires
   * early, finds nothing due and arms itself again.
   */
  private void armTimer() {
    if (dispatching) {
      return; // dispatch() arms once it has started everything due
    }
    long due = starts.nextDue();
    if (heldHere > 0) {
      due = Math.min(due, backlog.nextExpiry(timers.nowMillis()));
    }
    if (due == Long.MAX_VALUE) {
      if (timerId >= 0) {
        timers.cancel(timerId);
        timerId = -1;
        timerDue = Long.MAX_VALUE;
      }
      return;
    }
    if (timerId >= 0 && timerDue <= due) {
      return;
    }
    if (timerId >= 0) {
      timers.cancel(timerId);
    }
    timerDue = due;
    timerId = timers.schedule(Math.max(0, due - timers.nowMillis()), this::dispatch);
  }

  /**
   * The timer: fires every backend whose planned start has come, earliest first. Re-arms itself
   * even when one backend's start throws, so that one stops no other (as with a timer each).
   */
  @SuppressWarnings("unchecked")
  private void dispatch() {
    timerId = -1;
    timerDue = Long.MAX_VALUE;
    dispatching = true;
    try {
      long now = timers.nowMillis();
      backlog.release(now);
      while (!starts.isEmpty()) {
        Backend next = (Backend) starts.peek();
        if (next.due > now + next.schedule.early(next.phase)) {
          break;
        }
        starts.poll();
        next.fire();
      }
    } finally {
      dispatching = false;
      armTimer();
    }
  }

  private final class Backend extends Cadence implements Backlog.Held {
    final K key;
    ProbeTarget target;
    CheckSpec spec;
    boolean inFlight;
    boolean startWhenDone;
    boolean held;
    boolean retired;

    Backend(K key, ProbeTarget target, CheckSpec spec, ProbeSchedule schedule) {
      super(schedule);
      this.key = key;
      this.target = target;
      this.spec = spec;
    }

    void arm(long delay) {
      starts.add(this, timers.nowMillis() + delay);
      armTimer();
    }

    void rearm(long delay) {
      starts.dequeue(this);
      arm(delay);
    }

    void disarm() {
      starts.dequeue(this);
      armTimer();
    }

    void fire() {
      if (retired) {
        return;
      }
      long now = timers.nowMillis();
      planAfterDue(now, stretch, random);
      arm(Math.max(0, plannedStart - now));
      if (inFlight) {
        deferred++;
        startWhenDone = true;
        return;
      }
      startOrHold(now);
    }

    /** Starts now, or waits in line when the loop's backlog is full ({@link #MAX_BACKLOG}). */
    void startOrHold(long now) {
      if (held) {
        heldStarts++; // merged into the start already waiting
        return;
      }
      backlog.release(now); // those waiting go first
      if (backlog.full(now)) {
        heldStarts++;
        held = true;
        heldHere++;
        backlog.hold(ProbeScheduler.this, this);
        armTimer();
        return;
      }
      start(now);
    }

    @Override
    public void startHeld(long now) {
      held = false;
      heldHere--;
      if (!retired && !inFlight) {
        start(now);
      }
    }

    void start(long now) {
      inFlight = true;
      lastStart = now;
      backlog.started(now);
      ProbeTarget probed = target;
      try {
        prober.probe(probed, spec).onComplete(ar -> timers.execute(() -> completed(probed, ar)));
      } catch (RuntimeException e) {
        completed(
            probed,
            io.vertx.core.Future.succeededFuture(
                ProbeResult.fail(Reason.INTERNAL, "prober threw: " + e, 0)));
      }
    }

    void completed(ProbeTarget probed, AsyncResult<ProbeResult> ar) {
      inFlight = false;
      long now = timers.nowMillis();
      backlog.answered(lastStart, now);
      backlog.release(now);
      if (retired) {
        return;
      }
      ProbeResult result =
          ar.succeeded() && ar.result() != null
              ? ar.result()
              : ProbeResult.fail(Reason.INTERNAL, "prober failed: " + ar.cause(), 0);
      listener.onResult(key, probed, result);
      if (startWhenDone && !retired) {
        startWhenDone = false;
        startOrHold(timers.nowMillis());
      }
    }
  }
}
