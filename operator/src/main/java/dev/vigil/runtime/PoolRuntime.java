package dev.vigil.runtime;

import dev.vigil.budget.BudgetShare;
import dev.vigil.budget.ClassCounts;
import dev.vigil.budget.ProbeClass;
import dev.vigil.health.ActiveState;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.Transition;
import dev.vigil.probe.AgentReply;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Probing;
import dev.vigil.probe.Timers;
import io.vertx.core.Future;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Binds one pool's decision core to its probes and members (docs/design.md §6). Everything that
 * touches the core runs on one context ({@link PoolContext}: a Vert.x event loop through {@link
 * Timers}; a manual clock in tests), so the core needs no locks; other threads see only the
 * immutable {@link PoolView} it publishes.
 *
 * <p>A change of what the pool's status or slices show (a state change, an ejection, a dry-run
 * reason set or cleared, a multiplier's decay, panic, a member change, voters' answers, this
 * replica turning Suspect or back: docs/design.md §8) rebuilds the view and tells the listener (the
 * slice and status publishers; no reconcile). Probe results that change nothing rebuild nothing,
 * nor does a refusal by the ejection cap; a batch of outcomes rebuilds once.
 *
 * <p>Helpers with one job each: {@link TrackedBackends} (members), {@link PassiveOutcomes} (real-
 * request outcomes), {@link PoolTimers} (the sweep, ejection ends, releases), {@link EjectionBook}
 * (ejections, refusals, dry runs), {@link EjectionKeys} (the reporters' keyed batches that ejected,
 * kept beside their ejections), {@link EjectionNotice} and {@link TransitionReasons} (reason
 * strings). The scheduler hears each backend's probe class (docs/design.md §9) after every result
 * and outcome.
 */
public final class PoolRuntime {
  private final PoolKey key;
  private final PoolContext context;
  private final Probing probing;
  private final PoolListener listener;
  private final TransitionSink sink;
  private final LongSupplier clock;
  private final PoolHealth health;
  private final EjectionBook ejections;
  private final TrackedBackends backends;
  private final Confirmations confirmations;
  private final PassiveOutcomes outcomes;
  private final PoolTimers timed;

  private long policyVersion = -1;
  private boolean lastPanic;
  private boolean closed;

  /** Set once the first {@link #update} was applied; read by outcome routes on any thread. */
  private volatile boolean started;

  private volatile PoolView view;
  private volatile HealthSettings settings;
  private BudgetShare budget = BudgetShare.NONE; // the pool's context only
  private volatile String uid = "";

  /**
   * @param timers the pool's context: every task and timer of this runtime runs there ({@link
   *     dev.vigil.probe.VertxTimers} in the operator, a manual clock in tests)
   * @param probing makes the pool's probe loops, given the callback for their results
   */
  public PoolRuntime(
      PoolKey key,
      Timers timers,
      HealthSettings settings,
      Function<Probing.Results, Probing> probing,
      PoolListener listener,
      TransitionSink sink,
      Confirmer confirmer,
      LongSupplier clock) {
    this.key = key;
    this.context = new PoolContext(timers);
    this.listener = listener;
    this.sink = sink;
    this.clock = clock;
    this.health = new PoolHealth(settings);
    this.settings = settings;
    this.probing =
        probing.apply(
            new Probing.Results() {
              @Override
              public ProbeClass result(String id, ProbeResult result) {
                return onProbeResult(id, result);
              }

              @Override
              public void agent(String id, AgentReply reply) {
                onAgentReply(id, reply);
              }
            });
    this.ejections = new EjectionBook(key, sink);
    EjectionKeys keys = new EjectionKeys();
    this.backends = new TrackedBackends(health, this.probing, ejections, keys);
    this.confirmations =
        new Confirmations(key, context, health, backends, confirmer, sink, clock, this::afterEvent);
    this.outcomes = new PassiveOutcomes(health, backends, ejections, keys, clock, this::afterEvent);
    this.health.dampingListener(new DampingReports(key, sink, backends, health, clock));
    this.timed =
        new PoolTimers(
            key,
            timers,
            health,
            backends,
            ejections,
            confirmations,
            sink,
            clock,
            () -> closed,
            this::afterEvent);
    this.view = buildView();
  }

  public PoolKey key() {
    return key;
  }

  /** The pool's UID (what the sharder and the voters hash); "" until {@link #identify}. */
  public String uid() {
    return uid;
  }

  /** Sets the pool's UID; from any thread. */
  public void identify(String uid) {
    this.uid = uid == null ? "" : uid;
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

  /** Backends per probe class (docs/design.md §9); cheap, from any thread. */
  public ClassCounts probeClasses() {
    return backends.classes();
  }

  /** The settings in force; from any thread. */
  public HealthSettings settings() {
    return settings;
  }

  /**
   * The pool's part of the probe budget's latest plan: the scheduler applies the stretch at once;
   * the view (and so status) changes only when {@link BudgetShare#shownDiffers} says so.
   */
  public void share(BudgetShare share) {
    probing.stretch(share.stretch());
    context.run(
        () -> {
          if (!closed && budget.shownDiffers(share)) {
            budget = share;
            afterEvent(true);
          }
        });
  }

  /**
   * Of this pool's backends, how many failed their last probe; cheap, from any thread (counts kept
   * in step on the pool's context, no scan).
   */
  public FailingBackends failingBackends() {
    return backends.failing();
  }

  /** The latest view; cheap, from any thread. Probe details may lag; see {@link #freshView}. */
  public PoolView view() {
    return view;
  }

  /** A view built now on the pool's context, with the newest probe details. */
  public Future<PoolView> freshView() {
    return context.call(() -> closed ? view : (view = buildView()));
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
    return context.run(
        () -> {
          if (!closed) {
            applyUpdate(settings, check, policyVersion, members, restored);
            started = true;
          }
        });
  }

  /**
   * Whether the first {@link #update} was applied: before it the runtime, registered by the
   * reconciler a moment earlier, knows no backend and has not restored what a previous owner left
   * in status, so outcomes must wait for it (they would be answered {@code unknown_backend}, or
   * apply before the restore that then overwrites them).
   */
  public boolean started() {
    return started;
  }

  private long now() {
    return clock.getAsLong();
  }

  private void applyUpdate(
      HealthSettings settings,
      CheckSpec check,
      long newPolicyVersion,
      List<Member> members,
      Map<String, RestoredBackend> restored) {
    boolean material = false;
    if (!settings.equals(health.settings())) {
      health.apply(settings);
      this.settings = settings;
      material = true;
    }
    if (newPolicyVersion != policyVersion || !timed.sweeping()) {
      policyVersion = newPolicyVersion;
      probing.configure(check, settings);
      timed.restartSweep(settings.sweepIntervalMs());
      if (!check.agent().enabled()) {
        material |= backends.forgetAgents(); // no agent: its last word holds nothing any more
      }
    }
    material |= backends.update(members, restored, now());
    confirmations.refreshMode();
    afterEvent(material);
  }

  /**
   * Restores the panic flag a previous operator published, so a pool inside the panic band stays in
   * panic across a restart. Call before the first update.
   */
  public void restorePanic(boolean panic) {
    context.run(
        () -> {
          health.restorePanic(panic);
          lastPanic = panic;
        });
  }

  /** Decides on one probe result; returns the backend's probe class when that changed. */
  private ProbeClass onProbeResult(String id, ProbeResult result) {
    TrackedBackend t = backends.byId(id);
    if (closed || t == null) {
      return null;
    }
    long now = now();
    backends.probed(t, now, result.passed(), result.latencyMs(), result.detail());
    ActiveState before = t.backend.state();
    boolean wasEjected = t.backend.ejected();
    confirmations.refreshMode();
    Transition transition =
        health.onProbeResult(t.backend, result.passed(), result.failFast(), now);
    confirmations.after(t, transition);
    boolean material = wasEjected != t.backend.ejected();
    if (wasEjected && !t.backend.ejected()) {
      sink.unejected(key, id, TransitionReasons.UNEJECTED_BY_PROBE);
    }
    if (transition == Transition.CHANGED) {
      t.since = now;
      material = true;
      ActiveState after = t.backend.state();
      String why = TransitionReasons.probe(t.backend, result, after, health.settings());
      sink.stateChanged(key, id, before.name(), after.name(), why);
    }
    afterEvent(material);
    return backends.reclass(t, now);
  }

  /**
   * One answer of a backend's agent: it changes the backend's hold (docs/decision.md) or nothing.
   */
  private void onAgentReply(String id, AgentReply reply) {
    TrackedBackend t = backends.byId(id);
    if (closed || t == null || !reply.understood()) {
      return;
    }
    if (backends.agent(t, reply.applyTo(t.agent))) {
      t.since = now();
      afterEvent(true); // status shows the hold and the agent's reason
    }
  }

  /**
   * Feeds one real-request outcome reported for the backend at {@code ip} (docs/design.md §4).
   *
   * @return the decision, or null when no backend of this pool has that address
   */
  public Future<EjectionDecision> onOutcome(String ip, boolean ok, Origin origin) {
    return context.call(() -> closed ? null : outcomes.apply(ip, ok, origin));
  }

  /**
   * Feeds a batch of real-request outcomes in one hop to the pool's context (the intake's path: one
   * task per batch instead of one per outcome), and rebuilds the view at most once for the batch.
   * Outcomes for addresses that are no backend of this pool are reported back by index. A closed
   * runtime applies none of the batch and fails the future with {@link Closed} (the pool is being
   * handed over or removed: the reporter must send the whole batch again, to the next owner). An
   * exception fails the future too (the intake then releases the batch's queue slots).
   */
  public Future<AppliedOutcomes> onOutcomes(List<OutcomeReport> batch) {
    return onOutcomes(batch, null);
  }

  /**
   * {@link #onOutcomes(List)} for a batch under a reporter's idempotency key ({@code keySlot}, the
   * key's {@code IdempotencyKey.slot}; null: none): a batch that ejected a backend of this pool
   * before, here or at the owner whose status this runtime restored, is not applied again ({@link
   * AppliedOutcomes#repeat()}; docs/passive.md, "Sending a batch again").
   */
  public Future<AppliedOutcomes> onOutcomes(List<OutcomeReport> batch, String keySlot) {
    return context.call(
        () -> {
          if (closed) {
            throw new Closed(key);
          }
          return outcomes.applyAll(batch, keySlot);
        });
  }

  /**
   * Re-arms the deadline timers, and publishes a new view when something shown changed: this
   * replica's self-doubt too, read at each probe result and sweep, so its flip reaches status
   * within an interval even when no backend changes.
   */
  private void afterEvent(boolean material) {
    AvailabilitySnapshot snap = health.snapshot();
    boolean published = view.snapshot().version() != snap.version();
    if (snap.panic() != lastPanic) {
      lastPanic = snap.panic();
      sink.panicChanged(key, snap.panic(), snap.counts());
    }
    timed.arm();
    material |= confirmations.doubt() != view.doubt();
    if (material || published || !snap.counts().equals(view.snapshot().counts())) {
      view = buildView();
      listener.changed(key);
    }
  }

  private PoolView buildView() {
    AvailabilitySnapshot snap = health.snapshot();
    return new PoolView(
        snap, backends.snapshots(snap, clock.getAsLong()), confirmations.doubt(), budget);
  }

  /**
   * Outcomes of batches applied to a backend of this pool so far (unknown backends' not counted).
   */
  public long outcomesApplied() {
    return outcomes.applied();
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
    return context.run(
        () -> {
          if (!closed) {
            closed = true;
            probing.close();
            timed.cancel();
          }
        });
  }

  @Override
  public String toString() {
    return "PoolRuntime[" + key + ", " + Objects.requireNonNull(view).snapshot().counts() + "]";
  }
}
