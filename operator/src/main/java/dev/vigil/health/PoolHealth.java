package dev.vigil.health;

import java.util.List;
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
 * <p>The work is split by concern: {@link ActiveHysteresis} (probe results), {@link PassiveEjector}
 * (outcomes, the cap, deadlines, decay, the statistical rules), {@link FlapDamping}, {@link
 * PoolMembers} and {@link PoolLedger} (counts, panic, version); this class is their one entry,
 * which is why it is over 400 lines: a facade of short delegating methods, each with its rule.
 *
 * <p><b>Checker quorum</b> (docs/design.md §8): with a {@link Confirmation} other than ALONE, an Up
 * backend whose own verdict turns Down stays Up: {@link Transition#CONFIRM} asks the runtime to
 * send it to the voters, whose answers come back through {@link #onVotes}; a Suspect, lone owner
 * ({@link Confirmation#FREEZE}) holds it ({@link Transition#HELD}).
 *
 * <p><b>How ejections end.</b> An ejection ends when {@code now >= ejectedUntil}, checked at the
 * start of every call that takes {@code now}: {@link #onProbeResult}, {@link #onRequestOutcome},
 * {@link #sweep}, {@link #restore} and {@link #expireEjections}. Calls without {@code now} ({@link
 * #add}, {@link #remove}, {@link #setDraining}, {@link #setHold}, {@link #apply}, {@link
 * #snapshot}) end nothing. The runtime arms one timer for {@link #nextEjectionEnd()} and calls
 * {@link #expireEjections(long)} when it fires; a passing probe also ends an ejection when {@code
 * passive.unejectOnActivePass}.
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
  private Confirmation confirmation = Confirmation.ALONE;
  private final PoolMembers members = new PoolMembers();
  private final PoolLedger ledger = new PoolLedger();
  private final PassiveEjector ejector = new PassiveEjector(ledger);
  private final FlapDamping damping = new FlapDamping();
  private final ActiveHysteresis active = new ActiveHysteresis(ledger, ejector, damping);

  public PoolHealth(HealthSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  public HealthSettings settings() {
    return settings;
  }

  // ---- membership ----------------------------------------------------------------------------

  /** Adds a backend (state Unknown) and returns its handle; returns the existing one if present. */
  public Backend add(String id) {
    Backend b = members.get(Objects.requireNonNull(id, "id"));
    if (b != null) {
      return b;
    }
    return addNew(id);
  }

  /**
   * Adds a backend (state Unknown) whose id the caller knows is absent, without a lookup by id: for
   * a caller that keeps the handles in its own index by id (the runtime), so that the core makes no
   * index of its own. Refused when the id is a member and the core's index exists.
   */
  public Backend addNew(String id) {
    Backend b = members.add(this, Objects.requireNonNull(id, "id"));
    ledger.tally(b, 1); // Unknown, not draining: publishes nothing, so no version change
    return b;
  }

  /** The handle of a member, or null. */
  public Backend backend(String id) {
    return members.get(id);
  }

  /** Removes a backend; every running count and the cap forget it. False if it was no member. */
  public boolean remove(Backend b) {
    if (b == null || b.pool != this) {
      return false;
    }
    ledger.begin();
    ledger.change(b);
    damping.forget(b);
    ejector.forget(b);
    members.remove(b);
    ledger.end(settings);
    return true;
  }

  public boolean remove(String id) {
    return remove(members.get(id));
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
    setDraining(members.get(id), value);
  }

  /**
   * Sets what the admin state and the agent make of a backend ({@link BackendHold#of}, the
   * precedence in docs/decision.md). A held backend is out like a draining one: never ready, not
   * even in panic, outside the panic and cap denominators, still probed; a MAINT hold also leaves
   * the EndpointSlice. An agent's down makes it unavailable but keeps it decided. Rise and fall
   * runs are untouched: lifting the hold returns the backend to its own verdict at once.
   */
  public void setHold(Backend b, BackendHold hold) {
    Objects.requireNonNull(hold, "hold");
    if (b == null || b.pool != this || b.hold.equals(hold)) {
      return;
    }
    ledger.begin();
    ledger.change(b);
    b.hold = hold;
    ledger.tally(b, 1);
    ledger.end(settings);
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
      members.dropWindows(); // O(n), once per change
    }
    settings = newSettings;
    ledger.begin();
    damping.apply(settings.damping(), ledger);
    ledger.reevaluate();
    ledger.end(settings);
  }

  /** How the owner's Down verdicts decide from now on (docs/design.md §8); ALONE at first. */
  public void confirmation(Confirmation value) {
    confirmation = Objects.requireNonNull(value, "confirmation");
  }

  public Confirmation confirmation() {
    return confirmation;
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
    Transition t =
        pass
            ? active.pass(b, now, settings)
            : active.fail(b, failFast, now, settings, confirmation);
    ledger.end(settings);
    return t;
  }

  /**
   * The voters' answers on the Down verdict that {@link Transition#CONFIRM} sent out
   * (docs/design.md §8 rule 2): {@code down} and {@code up} voters answered, the others abstained.
   * CHANGED: confirmed, the backend is Down. UNCHANGED: not confirmed (it stays Up, its fail run
   * cleared) or nothing was out to the voters (a pass or a restore came first).
   */
  public Transition onVotes(Backend b, int down, int up, long now) {
    if (down < 0 || up < 0) {
      throw new IllegalArgumentException("votes must be >= 0, got down " + down + ", up " + up);
    }
    if (b == null || b.pool != this) {
      return Transition.UNCHANGED;
    }
    ledger.begin();
    expire(now);
    Transition t = active.votes(b, down, up, now, settings, confirmation);
    ledger.end(settings);
    return t;
  }

  public Transition onVotes(String id, int down, int up, long now) {
    Backend b = members.get(id);
    return b == null ? Transition.UNCHANGED : onVotes(b, down, up, now);
  }

  public Transition onProbeResult(String id, boolean pass, long now) {
    return onProbeResult(id, pass, false, now);
  }

  public Transition onProbeResult(String id, boolean pass, boolean failFast, long now) {
    Backend b = members.get(id);
    return b == null ? Transition.UNCHANGED : onProbeResult(b, pass, failFast, now);
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
    EjectionDecision d = ejector.onOutcome(b, ok, origin, latencyMs, now, settings);
    ledger.end(settings);
    return d;
  }

  public EjectionDecision onRequestOutcome(
      String id, boolean ok, Origin origin, long latencyMs, long now) {
    Backend b = members.get(id);
    return b == null
        ? EjectionDecision.NOT_NEEDED
        : onRequestOutcome(b, ok, origin, latencyMs, now);
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
    SweepReport report = ejector.sweep(now, settings);
    ledger.end(settings);
    return report;
  }

  /** Ends every ejection due at {@code now}; the runtime calls it at {@link #nextEjectionEnd()}. */
  public void expireEjections(long now) {
    ledger.begin();
    expire(now);
    ledger.end(settings);
  }

  /** When the next ejection ends (epoch ms), or {@link Long#MAX_VALUE} when nobody is ejected. */
  public long nextEjectionEnd() {
    return ejector.nextEnd();
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
  public void restore(Backend b, ActiveState state, int multiplier, long ejectedUntil, long now) {
    restore(b, state, multiplier, ejectedUntil, DampingState.NONE, now);
  }

  /**
   * As {@link #restore(Backend, ActiveState, int, long, long)}, with the flap-damping merit and
   * damped flag published in status: a backend that was damped stays damped until the same release
   * time (unless damping is now off or its merit has decayed by now), so a restart never releases
   * it early.
   */
  public void restore(
      Backend b,
      ActiveState state,
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
      ejector.end(b);
    }
    b.state = state;
    b.passRun = 0;
    b.failRun = 0;
    b.confirming = false;
    b.upstreamErrors = 0;
    b.localErrors = 0;
    PassiveEjector.clearWindow(b);
    ejector.restore(b, multiplier, ejectedUntil, now);
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
    return members.snapshot(ledger);
  }

  /** Changes exactly when the published sets or the panic flag change. */
  public long version() {
    return ledger.version;
  }

  public boolean panic() {
    return ledger.panic;
  }

  public int size() {
    return members.size();
  }

  public AvailabilitySnapshot.Counts counts() {
    return ledger.counts();
  }

  /** Immutable views of every member, for status writers. O(n). */
  public List<BackendView> views() {
    return members.views();
  }

  /** Ejections started since this pool was created (a metric). */
  public long ejections() {
    return ejector.ejections();
  }

  /** Ejections refused by the cap, each further error at the threshold counted again. */
  public long refusedEjections() {
    return ejector.refusedEjections();
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
    return ejector.wouldEjectCount();
  }

  // ---- bookkeeping -----------------------------------------------------------------------------

  private void expire(long now) {
    ejector.expire(now);
    damping.expire(now, ledger);
  }
}
