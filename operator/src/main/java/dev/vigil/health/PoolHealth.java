package dev.vigil.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The decision core of one pool (docs/design.md §2): backends, their active state, passive ejection
 * with its cap, decay, panic, and the published snapshot. Pure: the caller passes the time ({@code
 * now}, epoch ms) into every timed event; nothing here reads a clock, schedules or does I/O.
 *
 * <p>Not thread-safe: one pool is driven from one context (docs/design.md §6). Its outputs — {@link
 * #snapshot()} and {@link Backend#view()} — are immutable and may go to any thread.
 *
 * <p>Every event is O(1) except where noted: counts, the ejection cap and the version are running
 * values, never scans. Ejection deadlines sit in a min-heap (O(log e) for e ejected backends).
 *
 * <p><b>How ejections end.</b> An ejection ends when {@code now >= ejectedUntil}, checked at the
 * start of every call that takes {@code now}: {@link #onProbeResult}, {@link #onRequestOutcome},
 * {@link #sweep}, {@link #restore} and {@link #expireEjections}. Calls without {@code now} ({@link
 * #add}, {@link #remove}, {@link #setDraining}, {@link #apply}, {@link #snapshot}) end nothing. The
 * runtime arms one timer for {@link #nextEjectionEnd()} and calls {@link #expireEjections(long)}
 * when it fires; a passing probe also ends an ejection when {@code passive.unejectOnActivePass}.
 *
 * <p><b>Flap damping</b> (docs/design.md §2.1, when the settings have {@code damping}): every
 * active transition Up to Down or Down to Up penalizes the backend ({@link FlapDamping}); a damped
 * backend is not available until it is released, which, like the end of an ejection, happens at the
 * start of every call that takes {@code now}. The runtime arms one timer for {@link #nextRelease()}
 * and calls {@link #releaseDamped(long)}; a {@link DampingListener} hears of each damping and
 * release.
 */
public final class PoolHealth {
  private HealthSettings settings;
  private final Map<String, Backend> byId = new HashMap<>();
  private Backend[] members = new Backend[16];
  private int size;
  private long nextSerial;
  private final EjectionDeadlines deadlines = new EjectionDeadlines();
  private long nextEnd = Long.MAX_VALUE; // deadlines.nextDeadline(), cached for the hot path
  private Backend[] decaying = new Backend[16]; // backends with a multiplier above 0
  private int decayingSize;

  private long ejections;
  private long refusedEjections;
  private long wouldEjectCount;
  private final PoolLedger ledger = new PoolLedger();
  private final OutlierDetector outliers = new OutlierDetector();
  private final FlapDamping damping = new FlapDamping();
  private long sweeps;

  public PoolHealth(HealthSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  public HealthSettings settings() {
    return settings;
  }

  // ---- membership ----------------------------------------------------------------------------

  /** Adds a backend (state Unknown) and returns its handle; returns the existing one if present. */
  public Backend add(String id) {
    Backend b = byId.get(Objects.requireNonNull(id, "id"));
    if (b != null) {
      return b;
    }
    b = new Backend(this, id, nextSerial++);
    if (size == members.length) {
      members = Arrays.copyOf(members, size * 2);
    }
    b.index = size;
    members[size++] = b;
    byId.put(id, b);
    ledger.tally(b, 1); // Unknown, not draining: publishes nothing, so no version change
    return b;
  }

  /** The handle of a member, or null. */
  public Backend backend(String id) {
    return byId.get(id);
  }

  /** Removes a backend; every running count and the cap forget it. False if it was no member. */
  public boolean remove(Backend b) {
    if (b == null || b.pool != this) {
      return false;
    }
    ledger.begin();
    ledger.change(b);
    if (b.heapIndex >= 0) {
      deadlines.remove(b);
      nextEnd = deadlines.nextDeadline();
    }
    if (b.decayIndex >= 0) {
      stopDecay(b);
    }
    damping.forget(b);
    outliers.forget(b);
    Backend last = members[--size];
    members[b.index] = last;
    last.index = b.index;
    members[size] = null;
    byId.remove(b.id);
    b.pool = null;
    b.index = -1;
    ledger.end(settings);
    return true;
  }

  public boolean remove(String id) {
    return remove(byId.get(id));
  }

  /**
   * Marks a backend draining (a terminating Pod, or one the kubelet reports not Ready) or not. A
   * draining backend is never available, not even in panic, and leaves the panic and cap
   * denominators; it is still probed and its state still tracked.
   */
  public void setDraining(Backend b, boolean value) {
    if (b == null || b.pool != this || b.draining == value) {
      return;
    }
    ledger.begin();
    ledger.change(b);
    b.draining = value;
    ledger.tally(b, 1);
    ledger.end(settings);
  }

  public void setDraining(String id, boolean value) {
    setDraining(byId.get(id), value);
  }

  /**
   * Replaces the settings. State is kept: runs, multipliers and running ejections (with their end)
   * stay; new thresholds apply from the next event; panic is re-evaluated now. Damped backends are
   * released now when damping is turned off, and otherwise re-timed from their merit. A change of
   * {@code passive.windowFailures} empties every backend's failure window.
   */
  public void apply(HealthSettings newSettings) {
    Objects.requireNonNull(newSettings, "settings");
    if (newSettings.windowFailures() != settings.windowFailures()) {
      for (int i = 0; i < size; i++) {
        members[i].window = null; // a window of another size starts empty (O(n), once per change)
      }
    }
    settings = newSettings;
    ledger.begin();
    damping.apply(settings.damping(), ledger);
    ledger.reevaluate();
    ledger.end(settings);
  }

  // ---- events ----------------------------------------------------------------------------------

  /**
   * An active probe result. Hysteresis (docs/design.md §2 rule 2): a pass clears the fail run, a
   * fail the pass run; {@code fall} fails in a row take Up to Down, {@code rise} passes Down to Up;
   * the first result of an Unknown backend decides. With {@code unejectOnActivePass} a pass also
   * ends a running ejection (ejected-until = now, multiplier kept). The transition is about the
   * active state only; ejection changes show in the snapshot.
   */
  public Transition onProbeResult(Backend b, boolean pass, long now) {
    return onProbeResult(b, pass, false, now);
  }

  /**
   * As {@link #onProbeResult(Backend, boolean, long)}; a failure with {@code failFast} (a status in
   * {@code active.http.failFastStatuses}, docs/design.md §2.2) takes an Up backend Down at once,
   * whatever {@code fall}. It is otherwise an ordinary failure: the pass run resets, a Down backend
   * still needs {@code rise} passes, an Unknown backend goes Down. {@code failFast} means nothing
   * on a pass.
   */
  public Transition onProbeResult(Backend b, boolean pass, boolean failFast, long now) {
    if (b.pool != this) {
      return Transition.UNCHANGED;
    }
    ledger.begin();
    expire(now);
    Transition t = pass ? pass(b, now) : fail(b, failFast, now);
    ledger.end(settings);
    return t;
  }

  public Transition onProbeResult(String id, boolean pass, long now) {
    return onProbeResult(id, pass, false, now);
  }

  public Transition onProbeResult(String id, boolean pass, boolean failFast, long now) {
    Backend b = byId.get(id);
    return b == null ? Transition.UNCHANGED : onProbeResult(b, pass, failFast, now);
  }

  private Transition pass(Backend b, long now) {
    b.failRun = 0;
    if (b.passRun != Integer.MAX_VALUE) {
      b.passRun++;
    }
    if (b.ejected && settings.unejectOnActivePass()) {
      ledger.change(b);
      endEjection(b);
      b.ejectedUntil = now;
      ledger.tally(b, 1);
    }
    if (b.state == BackendState.UP) {
      return Transition.UNCHANGED;
    }
    if (b.state == BackendState.DOWN && b.passRun < settings.rise()) {
      return Transition.PENDING;
    }
    boolean flap = b.state == BackendState.DOWN;
    setState(b, BackendState.UP);
    if (flap) {
      damping.penalize(b, settings.damping(), now, ledger);
    }
    return Transition.CHANGED;
  }

  private Transition fail(Backend b, boolean failFast, long now) {
    b.passRun = 0;
    if (b.failRun != Integer.MAX_VALUE) {
      b.failRun++;
    }
    if (b.state == BackendState.DOWN) {
      return Transition.UNCHANGED;
    }
    if (b.state == BackendState.UP && b.failRun < settings.fall() && !failFast) {
      return Transition.PENDING;
    }
    boolean flap = b.state == BackendState.UP;
    setState(b, BackendState.DOWN);
    if (flap) {
      damping.penalize(b, settings.damping(), now, ledger);
    }
    return Transition.CHANGED;
  }

  /**
   * A real-request outcome (docs/design.md §2.3, 2.4 and the edge rules). A success resets both
   * error runs. An error extends the upstream run, or the local-origin run when it is local and
   * {@code splitLocalOrigin}; when that run is at or past its threshold (0 = rule off) the backend
   * is ejected for {@code base x multiplier} (capped at the maximum), and both runs reset. Not
   * when: it is already ejected (the error still counts; no new ejection until this one ends); the
   * cap refuses (counted, run kept, so every further error is another refused attempt); or in dry
   * run (reported and counted, runs reset, nobody ejected).
   *
   * <p>Failures within a window (docs/design.md §2.2, when {@code passive.windowFailures} is above
   * 0): an error counted on the upstream run is also timestamped; when the errors of the last
   * {@code failureWindow} reach {@code windowFailures}, the backend is ejected through the same
   * path, and an ejection (or a dry run's would-be ejection) empties the window. Successes do not;
   * a refused ejection leaves it as it is; errors while ejected still count.
   */
  public EjectionDecision onRequestOutcome(Backend b, boolean ok, Origin origin, long now) {
    return onRequestOutcome(b, ok, origin, -1, now);
  }

  public EjectionDecision onRequestOutcome(String id, boolean ok, Origin origin, long now) {
    return onRequestOutcome(id, ok, origin, -1, now);
  }

  /**
   * A real-request outcome with its latency: as {@link #onRequestOutcome(Backend, boolean, Origin,
   * long)}, and, while a statistical rule is on, counted into the backend's counters for the next
   * sweep (O(1)). A negative {@code latencyMs} means unknown (no latency sample).
   */
  public EjectionDecision onRequestOutcome(
      Backend b, boolean ok, Origin origin, long latencyMs, long now) {
    if (b.pool != this) {
      return EjectionDecision.NOT_NEEDED;
    }
    ledger.begin();
    expire(now);
    outliers.record(b, ok, origin, latencyMs, settings);
    EjectionDecision d = ok ? success(b) : error(b, origin, now);
    ledger.end(settings);
    return d;
  }

  public EjectionDecision onRequestOutcome(
      String id, boolean ok, Origin origin, long latencyMs, long now) {
    Backend b = byId.get(id);
    return b == null
        ? EjectionDecision.NOT_NEEDED
        : onRequestOutcome(b, ok, origin, latencyMs, now);
  }

  private static EjectionDecision success(Backend b) {
    b.upstreamErrors = 0;
    b.localErrors = 0;
    return EjectionDecision.NOT_NEEDED;
  }

  private EjectionDecision error(Backend b, Origin origin, long now) {
    HealthSettings s = settings;
    int run;
    int threshold;
    if (origin == Origin.LOCAL && s.splitLocalOrigin()) {
      run = b.localErrors = saturatingIncrement(b.localErrors);
      threshold = s.consecutiveLocalOriginErrors();
    } else {
      run = b.upstreamErrors = saturatingIncrement(b.upstreamErrors);
      threshold = s.consecutiveErrors();
      if (s.windowFailures() > 0 && windowTrips(b, now)) {
        if (b.ejected) {
          return EjectionDecision.NOT_NEEDED;
        }
        boolean consecutive = threshold != 0 && run >= threshold;
        EjectionDecision d = afterEjection(b, eject(b, s.enforce(), now));
        return consecutive ? d : d.byWindow();
      }
    }
    if (threshold == 0 || run < threshold || b.ejected) {
      return EjectionDecision.NOT_NEEDED;
    }
    return afterEjection(b, eject(b, s.enforce(), now));
  }

  /** A dry run's would-be ejection resets the runs and the window as an ejection does. */
  private static EjectionDecision afterEjection(Backend b, EjectionDecision d) {
    if (d.kind() == EjectionDecision.Kind.WOULD_EJECT) {
      b.upstreamErrors = 0;
      b.localErrors = 0;
      clearWindow(b);
    }
    return d;
  }

  /**
   * Records an error at {@code now} in b's window; true when the window is full (docs/design.md
   * §2.2).
   */
  private boolean windowTrips(Backend b, long now) {
    FailureWindow w = b.window;
    if (w == null) {
      w = b.window = new FailureWindow(settings.windowFailures());
    }
    return w.record(now, settings.failureWindowMs());
  }

  private static void clearWindow(Backend b) {
    if (b.window != null) {
      b.window.clear();
    }
  }

  /**
   * The one ejection path of every rule: for {@code base x multiplier} (capped), through the cap (a
   * refusal is counted), or, when not enforced, a counted dry run that changes nothing. An ejection
   * resets both error runs and the failure window. The caller checked that b is not ejected.
   */
  private EjectionDecision eject(Backend b, boolean enforce, long now) {
    HealthSettings s = settings;
    int multiplier = EjectionTime.nextMultiplier(b.multiplier, s);
    long until = EjectionTime.until(now, multiplier, s);
    if (!enforce) {
      wouldEjectCount++;
      return EjectionDecision.wouldEject(until);
    }
    if (!ledger.capAllows(b, s)) {
      refusedEjections++;
      return EjectionDecision.REFUSED_BY_CAP;
    }
    ledger.change(b);
    b.ejected = true;
    b.ejectedUntil = until;
    b.upstreamErrors = 0;
    b.localErrors = 0;
    clearWindow(b);
    setMultiplier(b, multiplier);
    deadlines.add(b);
    nextEnd = deadlines.nextDeadline();
    ledger.tally(b, 1);
    ejections++;
    return EjectionDecision.ejected(until);
  }

  /**
   * The sweep, every {@code passive.sweepInterval}; returns how many multipliers decayed. Same as
   * {@link #sweepReport(long)} without the report: the rules still eject.
   */
  public int sweep(long now) {
    return sweepReport(now).decayed();
  }

  /**
   * The sweep, in this order: end the ejections due at {@code now}; decay (docs/design.md §2.5:
   * lower by one the multiplier of every backend that is not ejected and has both error runs at
   * zero); run the statistical rules over the outcomes counted since the last sweep, each flagged
   * backend going through the same ejection path, cap and multiplier as consecutive errors; start a
   * new interval. At most one entry per backend: the first enforced rule that flags it, else the
   * first dry-run rule. Backends already ejected are not judged again.
   *
   * <p>Cost: O(k) for the k backends with a multiplier, plus O(t) for the t backends that had
   * outcomes in the interval (plus O(f log f) to order the f flagged ones); nothing for idle
   * backends.
   */
  public SweepReport sweepReport(long now) {
    ledger.begin();
    expire(now);
    int decayed = 0;
    for (int i = decayingSize - 1; i >= 0; i--) {
      Backend b = decaying[i];
      if (!b.ejected && b.upstreamErrors == 0 && b.localErrors == 0) {
        setMultiplier(b, b.multiplier - 1);
        decayed++;
      }
    }
    List<Ejection> judged = outliers.hasTraffic() ? judge(now) : List.of();
    outliers.reset();
    ledger.end(settings);
    return decayed == 0 && judged.isEmpty()
        ? SweepReport.NOTHING
        : new SweepReport(decayed, judged);
  }

  private List<Ejection> judge(long now) {
    List<OutlierDetector.Candidate> flagged = outliers.detect(settings);
    if (flagged.isEmpty()) {
      return List.of();
    }
    long sweep = ++sweeps;
    List<Ejection> out = new ArrayList<>();
    for (OutlierDetector.Candidate c : flagged) {
      Backend b = c.backend();
      if (b.ejected || b.judgedInSweep == sweep) {
        continue;
      }
      b.judgedInSweep = sweep;
      EjectionDecision d = eject(b, c.enforce(), now);
      out.add(new Ejection(b.id, c.rule(), d.kind(), d.ejectedUntil(), c.reason()));
    }
    return out;
  }

  /** Ends every ejection due at {@code now}; the runtime calls it at {@link #nextEjectionEnd()}. */
  public void expireEjections(long now) {
    ledger.begin();
    expire(now);
    ledger.end(settings);
  }

  /** When the next ejection ends (epoch ms), or {@link Long#MAX_VALUE} when nobody is ejected. */
  public long nextEjectionEnd() {
    return nextEnd;
  }

  /**
   * Releases every damped backend due at {@code now} (and ends the ejections due); the runtime
   * calls it at {@link #nextRelease()}.
   */
  public void releaseDamped(long now) {
    expireEjections(now);
  }

  /** When the next damped backend is released (epoch ms), or {@link Long#MAX_VALUE} when none. */
  public long nextRelease() {
    return damping.nextRelease();
  }

  /** Who hears of dampings and releases; null for nobody. */
  public void dampingListener(DampingListener listener) {
    damping.listener(listener);
  }

  // ---- restart ---------------------------------------------------------------------------------

  /**
   * Restores one backend from published status after an operator restart, so the restart changes
   * nothing that was published. Runs start at zero (an Up backend still needs {@code fall} fails to
   * go Down). An {@code ejectedUntil} after {@code now} restores a running ejection without
   * consulting the cap (it was accepted before the restart).
   */
  public void restore(Backend b, BackendState state, int multiplier, long ejectedUntil, long now) {
    restore(b, state, multiplier, ejectedUntil, DampingState.NONE, now);
  }

  /**
   * As {@link #restore(Backend, BackendState, int, long, long)}, with the flap-damping merit and
   * damped flag published in status: a backend that was damped stays damped until the same release
   * time (unless damping is now off or its merit has decayed by now), so a restart never releases
   * it early.
   */
  public void restore(
      Backend b,
      BackendState state,
      int multiplier,
      long ejectedUntil,
      DampingState dampingState,
      long now) {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(dampingState, "dampingState");
    if (multiplier < 0) {
      throw new IllegalArgumentException("multiplier must be >= 0, was " + multiplier);
    }
    if (b == null || b.pool != this) {
      return;
    }
    ledger.begin();
    expire(now);
    ledger.change(b);
    if (b.ejected) {
      endEjection(b);
    }
    b.state = state;
    b.passRun = 0;
    b.failRun = 0;
    b.upstreamErrors = 0;
    b.localErrors = 0;
    clearWindow(b);
    setMultiplier(b, multiplier);
    b.ejectedUntil = ejectedUntil;
    if (ejectedUntil > now) {
      b.ejected = true;
      deadlines.add(b);
      nextEnd = deadlines.nextDeadline();
    }
    damping.restore(b, dampingState, settings.damping(), now);
    ledger.tally(b, 1);
    ledger.end(settings);
  }

  /**
   * Restores the panic flag last published, after every backend is restored, so a pool that was in
   * its panic band stays in panic. The band rule is applied at once, so a flag that contradicts the
   * counts is corrected.
   */
  public void restorePanic(boolean value) {
    ledger.begin();
    ledger.panic = value;
    ledger.reevaluate();
    ledger.end(settings);
  }

  // ---- outputs ---------------------------------------------------------------------------------

  /**
   * The published verdict. O(1) when nothing changed since the last call (the same object comes
   * back); O(1) plus a small record when only counts changed; O(n) when the version changed (the
   * sets are rebuilt from the members). Runtimes take it when {@link #version()} moved.
   */
  public AvailabilitySnapshot snapshot() {
    return ledger.snapshot(members, size);
  }

  /** Changes exactly when the published sets or the panic flag change. */
  public long version() {
    return ledger.version;
  }

  public boolean panic() {
    return ledger.panic;
  }

  public int size() {
    return size;
  }

  public AvailabilitySnapshot.Counts counts() {
    return ledger.counts();
  }

  /** Immutable views of every member, for status writers. O(n). */
  public List<BackendView> views() {
    List<BackendView> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(members[i].view());
    }
    return out;
  }

  /** Ejections started since this pool was created (a metric). */
  public long ejections() {
    return ejections;
  }

  /** Ejections refused by the cap, each further error at the threshold counted again. */
  public long refusedEjections() {
    return refusedEjections;
  }

  /** Backends damped since this pool was created (a metric). */
  public long dampings() {
    return damping.dampings();
  }

  /** Damped backends released since this pool was created (a metric). */
  public long releases() {
    return damping.releases();
  }

  /** Would-be ejections reported in dry run ({@code passive.enforce: false}). */
  public long wouldEjectCount() {
    return wouldEjectCount;
  }

  // ---- bookkeeping -----------------------------------------------------------------------------

  private void expire(long now) {
    while (now >= nextEnd) {
      Backend b = deadlines.peek();
      ledger.change(b);
      endEjection(b);
      ledger.tally(b, 1);
    }
    damping.expire(now, ledger);
  }

  /** Clears the ejected flag and its deadline; callers bracket it with change/tally. */
  private void endEjection(Backend b) {
    b.ejected = false;
    deadlines.remove(b);
    nextEnd = deadlines.nextDeadline();
  }

  private void setState(Backend b, BackendState state) {
    ledger.change(b);
    b.state = state;
    ledger.tally(b, 1);
  }

  private void setMultiplier(Backend b, int multiplier) {
    b.multiplier = multiplier;
    if (multiplier > 0 && b.decayIndex < 0) {
      if (decayingSize == decaying.length) {
        decaying = Arrays.copyOf(decaying, decayingSize * 2);
      }
      b.decayIndex = decayingSize;
      decaying[decayingSize++] = b;
    } else if (multiplier == 0 && b.decayIndex >= 0) {
      stopDecay(b);
    }
  }

  private void stopDecay(Backend b) {
    Backend last = decaying[--decayingSize];
    decaying[b.decayIndex] = last;
    last.decayIndex = b.decayIndex;
    decaying[decayingSize] = null;
    b.decayIndex = -1;
  }

  private static int saturatingIncrement(int run) {
    return run == Integer.MAX_VALUE ? run : run + 1;
  }
}
