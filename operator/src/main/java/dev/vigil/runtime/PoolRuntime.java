package dev.vigil.runtime;

import dev.vigil.health.ActiveState;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.Backend;
import dev.vigil.health.DampingListener;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.Ejection;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.ProbePhase;
import dev.vigil.health.SweepReport;
import dev.vigil.health.Transition;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Timers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Binds one pool's decision core to its probes and members (docs/design.md §6). Everything that
 * touches the core runs on one context (a Vert.x event loop through {@link Timers}; a manual clock
 * in tests), so the core needs no locks; other threads see only the immutable {@link PoolView} it
 * publishes.
 *
 * <p>A change of what the pool's status or slices show (a state change, an ejection, a dry-run
 * reason set or cleared, a multiplier's decay, panic, a member change) rebuilds the view and tells
 * the listener (the slice and status publishers; no reconcile). Probe results that change nothing
 * rebuild nothing, nor does a refusal by the ejection cap; a batch of outcomes rebuilds once.
 *
 * <p>Timers: one periodic sweep, one timer for the next ejection end and one for the next release
 * of a damped backend (docs/design.md §2.1), each re-armed only when the core's next deadline
 * moved. After every probe result the backend's probe phase goes to the scheduler, which then uses
 * {@code fastInterval} or {@code downInterval}.
 */
public final class PoolRuntime {
  private static final class Tracked {
    Member member;
    Backend backend;
    LastProbe lastProbe;
    long since;
    String wouldEject;

    /** When the dry-run ejection behind {@link #wouldEject} would have ended (epoch ms). */
    long wouldEjectUntil;

    /** In a run of refusals by the cap: further refusals are counted, not reported again. */
    boolean refused;

    ProbePhase phase = ProbePhase.NORMAL;
  }

  private final PoolKey key;
  private final Timers timers;
  private final Probing probing;
  private final PoolListener listener;
  private final TransitionSink sink;
  private final LongSupplier clock;

  private PoolHealth health;
  private long policyVersion = -1;
  private final Map<String, Tracked> byId = new TreeMap<>();
  private final Map<String, Tracked> byIp = new HashMap<>();

  /** The backends showing a dry-run reason, cleared at the sweep after it stops being true. */
  private final java.util.Set<Tracked> dryRuns = new java.util.HashSet<>();

  private long sweepTimer = -1;
  private long sweepIntervalMs;
  private long ejectionTimer = -1;
  private long ejectionTimerAt = Long.MAX_VALUE;
  private long releaseTimer = -1;
  private long releaseTimerAt = Long.MAX_VALUE;
  private boolean lastPanic;
  private boolean closed;
  private volatile PoolView view;

  /**
   * @param timers the pool's context: every task and timer of this runtime runs there ({@link
   *     dev.vigil.probe.VertxTimers} in the operator, a manual clock in tests)
   * @param probing makes the pool's probe loops, given the callback for their results
   */
  public PoolRuntime(
      PoolKey key,
      Timers timers,
      HealthSettings settings,
      Function<ProbeCallback, Probing> probing,
      PoolListener listener,
      TransitionSink sink,
      LongSupplier clock) {
    this.key = key;
    this.timers = timers;
    this.listener = listener;
    this.sink = sink;
    this.clock = clock;
    this.health = new PoolHealth(settings);
    this.health.dampingListener(new DampingEvents());
    this.probing = probing.apply(this::onProbeResult);
    this.view = buildView();
  }

  /** Receives one probe result on the pool's context. */
  @FunctionalInterface
  public interface ProbeCallback {
    void result(String id, ProbeResult result);
  }

  public PoolKey key() {
    return key;
  }

  /** See {@link Probing#deferredStarts()}; from any thread. */
  public long deferredStarts() {
    return probing.deferredStarts();
  }

  /** See {@link Probing#heldStarts()}; from any thread. */
  public long heldStarts() {
    return probing.heldStarts();
  }

  /** See {@link Probing#lanes()}; from any thread. */
  public int probeLanes() {
    return probing.lanes();
  }

  /** The latest view; cheap, from any thread. Probe details may lag; see {@link #freshView}. */
  public PoolView view() {
    return view;
  }

  /** A view built now on the pool's context, with the newest probe details. */
  public Future<PoolView> freshView() {
    Promise<PoolView> p = Promise.promise();
    timers.execute(
        () -> {
          try {
            p.complete(closed ? view : (view = buildView()));
          } catch (RuntimeException e) {
            p.fail(e);
          }
        });
    return p.future();
  }

  /**
   * Brings the pool in step with its policy and Pods: new members start Unknown (or as restored),
   * kept members keep their state, gone members are removed, draining follows the Pod.
   *
   * @param restored state a previous operator left in status and slices, by member id; used only
   *     for members new to this runtime
   */
  public Future<Void> update(
      HealthSettings settings,
      CheckSpec check,
      long policyVersion,
      List<Member> members,
      Map<String, RestoredBackend> restored) {
    Promise<Void> p = Promise.promise();
    timers.execute(
        () -> {
          try {
            if (!closed) {
              applyUpdate(settings, check, policyVersion, members, restored);
            }
            p.complete();
          } catch (RuntimeException e) {
            p.fail(e);
          }
        });
    return p.future();
  }

  private void applyUpdate(
      HealthSettings settings,
      CheckSpec check,
      long newPolicyVersion,
      List<Member> members,
      Map<String, RestoredBackend> restored) {
    boolean material = false;
    long now = clock.getAsLong();
    if (!settings.equals(health.settings())) {
      health.apply(settings);
      material = true;
    }
    if (newPolicyVersion != policyVersion || sweepTimer < 0) {
      policyVersion = newPolicyVersion;
      probing.configure(check, settings);
      restartSweep(settings.sweepIntervalMs());
    }
    Map<String, Member> wanted = new HashMap<>();
    for (Member m : members) {
      wanted.put(m.id(), m);
    }
    for (Tracked t : new ArrayList<>(byId.values())) {
      Member m = wanted.get(t.member.id());
      if (m == null || !m.ip().equals(t.member.ip()) || m.probePort() != t.member.probePort()) {
        removeTracked(t);
        material = true;
      }
    }
    for (Member m : members) {
      Tracked t = byId.get(m.id());
      if (t == null) {
        t = addTracked(m, restored.get(m.id()), now);
        material = true;
      } else if (!m.equals(t.member)) {
        if (m.draining() != t.member.draining()) {
          health.setDraining(t.backend, m.draining());
          t.since = now;
        }
        t.member = m;
        material = true;
      }
    }
    afterEvent(material);
  }

  /**
   * Restores the panic flag a previous operator published, so a pool inside the panic band stays in
   * panic across a restart. Call before the first update.
   */
  public void restorePanic(boolean panic) {
    timers.execute(
        () -> {
          health.restorePanic(panic);
          lastPanic = panic;
        });
  }

  private Tracked addTracked(Member m, RestoredBackend restored, long now) {
    Tracked t = new Tracked();
    t.member = m;
    t.backend = health.add(m.id());
    t.since = now;
    if (restored != null && restored.state() != ActiveState.UNKNOWN) {
      health.restore(
          t.backend,
          restored.state(),
          restored.ejections(),
          restored.ejectedUntil(),
          restored.damping(),
          now);
      if (restored.since() > 0 && restored.since() <= now) {
        t.since = restored.since();
      }
    }
    if (m.draining()) {
      health.setDraining(t.backend, true);
    }
    byId.put(m.id(), t);
    byIp.put(m.ip(), t);
    probing.add(m.id(), new ProbeTarget(m.ip(), m.probePort()));
    tellPhase(t);
    return t;
  }

  /** Passes a changed probe phase on to the scheduler. */
  private void tellPhase(Tracked t) {
    ProbePhase phase = t.backend.phase();
    if (phase != t.phase) {
      t.phase = phase;
      probing.phase(t.member.id(), phase);
    }
  }

  /** Flap damping's events, heard in the middle of a core event on the pool's context. */
  private final class DampingEvents implements DampingListener {
    @Override
    public void damped(Backend b) {
      Tracked t = byId.get(b.id());
      if (t != null) {
        t.since = clock.getAsLong();
      }
      sink.damped(key, b.id(), b.releaseAt(), dampedWhy(b));
    }

    @Override
    public void released(Backend b) {
      Tracked t = byId.get(b.id());
      if (t != null) {
        t.since = clock.getAsLong();
      }
      sink.released(
          key,
          b.id(),
          health.settings().damps()
              ? "merit decayed to damping.reuseThreshold"
              : "damping turned off");
    }
  }

  private String dampedWhy(Backend b) {
    DampingSettings d = health.settings().damping();
    return String.format(
        java.util.Locale.ROOT,
        "flapping: merit %.0f above damping.suppressThreshold %d",
        b.merit(),
        d == null ? 0 : d.suppressThreshold());
  }

  private void removeTracked(Tracked t) {
    dryRuns.remove(t);
    probing.remove(t.member.id());
    health.remove(t.backend);
    byId.remove(t.member.id());
    byIp.remove(t.member.ip(), t);
  }

  private void onProbeResult(String id, ProbeResult result) {
    Tracked t = byId.get(id);
    if (closed || t == null) {
      return;
    }
    long now = clock.getAsLong();
    t.lastProbe = new LastProbe(now, result.passed(), result.latencyMs(), result.detail());
    ActiveState before = t.backend.state();
    boolean wasEjected = t.backend.ejected();
    Transition transition =
        health.onProbeResult(t.backend, result.passed(), result.failFast(), now);
    boolean material = wasEjected != t.backend.ejected();
    if (wasEjected && !t.backend.ejected()) {
      sink.unejected(key, id, "active probe passed (passive.unejectOnActivePass)");
    }
    if (transition == Transition.CHANGED) {
      t.since = now;
      material = true;
      ActiveState after = t.backend.state();
      sink.stateChanged(key, id, before.name(), after.name(), reasonFor(t, result, after));
    }
    tellPhase(t);
    afterEvent(material);
  }

  private String reasonFor(Tracked t, ProbeResult result, ActiveState after) {
    HealthSettings s = health.settings();
    if (after == ActiveState.UP) {
      return (t.backend.passRun() <= 1 ? "first probe passed" : s.rise() + " probes passed");
    }
    if (result.failFast() && t.backend.failRun() < s.fall()) {
      return "fail-fast status (active.http.failFastStatuses): " + result.detail();
    }
    return (t.backend.failRun() <= 1 ? "first probe failed: " : s.fall() + " probes failed: ")
        + result.detail();
  }

  /**
   * Feeds one real-request outcome reported for the backend at {@code ip} (docs/design.md §4).
   *
   * @return the decision, or null when no backend of this pool has that address
   */
  public Future<EjectionDecision> onOutcome(String ip, boolean ok, Origin origin) {
    Promise<EjectionDecision> p = Promise.promise();
    timers.execute(
        () -> {
          try {
            Tracked t = byIp.get(ip);
            if (closed || t == null) {
              p.complete(null);
              return;
            }
            EjectionDecision d = health.onRequestOutcome(t.backend, ok, origin, -1, now());
            afterEvent(reportOutcome(t, d, ok, origin));
            p.complete(d);
          } catch (RuntimeException e) {
            p.fail(e);
          }
        });
    return p.future();
  }

  /**
   * Feeds a batch of real-request outcomes in one hop to the pool's context (the intake's path: one
   * task per batch instead of one per outcome), and rebuilds the view at most once for the batch.
   * Outcomes for addresses that are no backend of this pool are reported back by index. A closed
   * runtime applies none of the batch and fails the future with {@link Closed} (the pool is being
   * handed over or removed: the reporter must send the whole batch again, to the next owner). An
   * exception fails the future too (the intake then releases the batch's queue slots).
   */
  public Future<AppliedOutcomes> onOutcomes(List<OutcomeReport> outcomes) {
    Promise<AppliedOutcomes> p = Promise.promise();
    timers.execute(
        () -> {
          if (closed) {
            p.fail(new Closed(key));
            return;
          }
          try {
            p.complete(applyOutcomes(outcomes));
          } catch (RuntimeException e) {
            p.fail(e);
          }
        });
    return p.future();
  }

  private AppliedOutcomes applyOutcomes(List<OutcomeReport> outcomes) {
    java.util.BitSet unknown = new java.util.BitSet();
    List<AppliedOutcomes.Decided> decided = new ArrayList<>(0);
    boolean material = false;
    try {
      for (int i = 0; i < outcomes.size(); i++) {
        OutcomeReport o = outcomes.get(i);
        Tracked t = closed ? null : byIp.get(o.ip());
        if (t == null) {
          unknown.set(i);
          continue;
        }
        EjectionDecision d =
            health.onRequestOutcome(t.backend, o.ok(), o.origin(), o.latencyMs(), now());
        material |= reportOutcome(t, d, o.ok(), o.origin());
        if (d.kind() != EjectionDecision.Kind.NOT_NEEDED) {
          decided.add(new AppliedOutcomes.Decided(t.member.id(), d));
        }
      }
    } finally {
      // what was applied before an exception is shown too
      afterEvent(material);
    }
    return new AppliedOutcomes(unknown, decided);
  }

  private long now() {
    return clock.getAsLong();
  }

  /**
   * Reports one outcome's decision; true when it changed something status or slices show. A refusal
   * by the cap shows nothing new: the first of a run is reported, the rest only counted.
   */
  private boolean reportOutcome(Tracked t, EjectionDecision d, boolean ok, Origin origin) {
    if (ok) {
      t.refused = false;
    }
    switch (d.kind()) {
      case EJECTED -> {
        t.since = now();
        t.refused = false;
        clearDryRun(t);
        sink.ejected(key, t.member.id(), d.ejectedUntil(), why(d, origin));
        return true;
      }
      case REFUSED_BY_CAP -> {
        refused(t, why(d, origin));
        return false;
      }
      case WOULD_EJECT -> {
        dryRun(t, why(d, origin) + " (dry run: passive.enforce is false)", d.ejectedUntil());
        sink.wouldEject(key, t.member.id(), why(d, origin));
        return true;
      }
      default -> {
        return false;
      }
    }
  }

  private void refused(Tracked t, String why) {
    if (t.refused) {
      sink.ejectionRefusedAgain(key, t.member.id());
    } else {
      t.refused = true;
      sink.ejectionRefused(key, t.member.id(), why);
    }
  }

  private void dryRun(Tracked t, String reason, long until) {
    t.wouldEject = reason;
    t.wouldEjectUntil = until;
    dryRuns.add(t);
  }

  private void clearDryRun(Tracked t) {
    t.wouldEject = null;
    dryRuns.remove(t);
  }

  /** Clears the dry-run reasons whose would-be ejection has ended; true when any was cleared. */
  private boolean expireDryRuns(long now) {
    boolean cleared = false;
    for (java.util.Iterator<Tracked> it = dryRuns.iterator(); it.hasNext(); ) {
      Tracked t = it.next();
      if (t.wouldEjectUntil <= now) {
        t.wouldEject = null;
        it.remove();
        cleared = true;
      }
    }
    return cleared;
  }

  private String why(EjectionDecision d, Origin origin) {
    HealthSettings s = health.settings();
    if (d.window()) {
      long ms = s.failureWindowMs();
      return s.windowFailures()
          + " errors within "
          + (ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms")
          + " (passive.windowFailures)";
    }
    return origin == Origin.LOCAL && s.splitLocalOrigin()
        ? s.consecutiveLocalOriginErrors() + " consecutive local-origin errors"
        : s.consecutiveErrors() + " consecutive errors";
  }

  private void restartSweep(long intervalMs) {
    if (sweepTimer >= 0) {
      timers.cancel(sweepTimer);
    }
    sweepIntervalMs = intervalMs;
    sweepTimer = timers.schedule(intervalMs, this::onSweep);
  }

  /** The periodic sweep: re-arms itself first, so a failing sweep never stops the next one. */
  private void onSweep() {
    sweepTimer = closed ? -1 : timers.schedule(sweepIntervalMs, this::onSweep);
    if (!closed) {
      long now = clock.getAsLong();
      boolean changed = expireDryRuns(now);
      changed |= report(health.sweepReport(now));
      afterEvent(changed);
    }
  }

  /**
   * Reports what one sweep did; true when status or slices show it: an ejection, a dry-run reason,
   * or a multiplier that decayed ({@code backends[].ejections}). A refusal shows nothing new.
   */
  private boolean report(SweepReport sweep) {
    long now = clock.getAsLong();
    boolean shown = false;
    for (Ejection e : sweep.ejections()) {
      Tracked t = byId.get(e.backendId());
      if (t == null) {
        continue;
      }
      switch (e.kind()) {
        case EJECTED -> {
          t.since = now;
          t.refused = false;
          clearDryRun(t);
          sink.ejected(key, e.backendId(), e.ejectedUntil(), e.reason());
          shown = true;
        }
        case REFUSED_BY_CAP -> refused(t, e.reason());
        case WOULD_EJECT -> {
          dryRun(t, e.reason() + " (dry run)", e.ejectedUntil());
          sink.wouldEject(key, e.backendId(), e.reason());
          shown = true;
        }
        default -> {}
      }
    }
    return shown || sweep.decayed() > 0;
  }

  /** Re-arms the ejection timer, and publishes a new view when something shown changed. */
  private void afterEvent(boolean material) {
    AvailabilitySnapshot snap = health.snapshot();
    boolean published = view.snapshot().version() != snap.version();
    if (snap.panic() != lastPanic) {
      lastPanic = snap.panic();
      sink.panicChanged(key, snap.panic(), snap.counts());
    }
    armEjectionTimer();
    armReleaseTimer();
    if (material || published || !snap.counts().equals(view.snapshot().counts())) {
      view = buildView();
      listener.changed(key);
    }
  }

  private void armEjectionTimer() {
    long next = health.nextEjectionEnd();
    if (next == ejectionTimerAt) {
      return;
    }
    if (ejectionTimer >= 0) {
      timers.cancel(ejectionTimer);
      ejectionTimer = -1;
    }
    ejectionTimerAt = next;
    if (next == Long.MAX_VALUE || next < 0) {
      return;
    }
    long delay = Math.max(1, next - clock.getAsLong());
    ejectionTimer = timers.schedule(delay, this::onEjectionTimer);
  }

  private void onEjectionTimer() {
    ejectionTimer = -1;
    ejectionTimerAt = Long.MAX_VALUE;
    if (closed) {
      return;
    }
    long now = clock.getAsLong();
    for (Tracked t : byId.values()) {
      if (t.backend.ejected() && t.backend.ejectedUntil() <= now) {
        t.since = now;
        sink.unejected(key, t.member.id(), "ejection time ended");
      }
    }
    health.expireEjections(now);
    afterEvent(true);
  }

  /** One timer for the next release of a damped backend (docs/design.md §2.1). */
  private void armReleaseTimer() {
    long next = health.nextRelease();
    if (next == releaseTimerAt) {
      return;
    }
    if (releaseTimer >= 0) {
      timers.cancel(releaseTimer);
      releaseTimer = -1;
    }
    releaseTimerAt = next;
    if (next == Long.MAX_VALUE) {
      return;
    }
    long delay = Math.max(1, next - clock.getAsLong());
    releaseTimer =
        timers.schedule(
            delay,
            () -> {
              releaseTimer = -1;
              releaseTimerAt = Long.MAX_VALUE;
              if (!closed) {
                health.releaseDamped(clock.getAsLong());
                afterEvent(true);
              }
            });
  }

  private PoolView buildView() {
    AvailabilitySnapshot snap = health.snapshot();
    List<BackendSnapshot> backends = new ArrayList<>(byId.size());
    for (Tracked t : byId.values()) {
      boolean healthy =
          t.backend.state() == ActiveState.UP && !t.backend.ejected() && !t.backend.damped();
      backends.add(
          new BackendSnapshot(
              t.member,
              t.backend.view(),
              snap.ready().contains(t.member.id()),
              healthy,
              t.since,
              t.lastProbe,
              t.wouldEject));
    }
    return new PoolView(snap, List.copyOf(backends));
  }

  /** A batch reached a closed runtime: nothing of it was applied. */
  public static final class Closed extends IllegalStateException {
    Closed(PoolKey key) {
      super("the runtime of " + key + " is closed");
    }
  }

  /**
   * Stops probing and timers and seals the runtime against outcomes ({@link Closed}); the view
   * stays readable. Once the future completes, every batch applied before is in the view (one
   * context runs both), so a status written then holds all of them: the handoff closes the runtime
   * before it writes the status the next owner restores from.
   */
  public Future<Void> close() {
    Promise<Void> p = Promise.promise();
    timers.execute(
        () -> {
          if (!closed) {
            closed = true;
            probing.close();
            for (long timer : new long[] {sweepTimer, ejectionTimer, releaseTimer}) {
              if (timer >= 0) {
                timers.cancel(timer);
              }
            }
            sweepTimer = ejectionTimer = releaseTimer = -1;
          }
          p.complete();
        });
    return p.future();
  }

  @Override
  public String toString() {
    return "PoolRuntime[" + key + ", " + Objects.requireNonNull(view).snapshot().counts() + "]";
  }
}
