package dev.vigil.publish;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.EjectingBatch;
import dev.vigil.api.v1alpha1.LastProbe;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.BackendHold;
import dev.vigil.health.BackendView;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.BatchKey;
import dev.vigil.runtime.CheckerDoubt;
import dev.vigil.runtime.PoolView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Builds a BackendPool's status from what was observed, pure (STYLE: Keycloak's aggregator). The
 * per-backend list is capped, unavailable backends first, so the object stays far below the API
 * server's size limit on very large pools.
 */
public final class PoolStatusAggregator {
  /** Backends listed in status at most. */
  public static final int MAX_BACKENDS_LISTED = 250;

  /** Why a pool cannot publish: a Ready reason and a message naming the problem. */
  public record Problem(String reason, String message) {}

  private PoolStatusAggregator() {}

  /**
   * @param view the runtime's view, or null when the pool has none (e.g. its policy is missing)
   * @param problem why the pool is not publishing, or null
   * @param previous the current status (for condition transition times), or null
   */
  public static BackendPoolStatus build(
      Long generation,
      String policy,
      PoolView view,
      Problem problem,
      BackendPoolStatus previous,
      long nowMs) {
    String now = Instant.ofEpochMilli(nowMs).toString();
    BackendPoolStatus status = new BackendPoolStatus();
    status.setObservedGeneration(generation);
    status.setPolicy(policy);
    ConditionSet conditions =
        new ConditionSet(previous == null ? null : previous.getConditions(), now, generation);
    if (view != null) {
      countsObserved(status, view);
    } else if (previous != null) {
      countsKept(status, previous);
    } else {
      countsNone(status);
    }
    readyCondition(conditions, view, problem);
    panicCondition(conditions, view);
    degradedCondition(conditions, view);
    checkerSuspectCondition(conditions, view);
    BudgetStatus.apply(status, conditions, view, previous);
    status.setConditions(conditions.build());
    return status;
  }

  private static void countsObserved(BackendPoolStatus status, PoolView view) {
    AvailabilitySnapshot.Counts c = view.snapshot().counts();
    status.setTotal(c.total());
    status.setAvailable(c.available());
    status.setDown(c.down());
    status.setEjected(c.ejected());
    status.setPanic(view.snapshot().panic());
    status.setAvailability(c.available() + "/" + c.total());
    status.setBackends(backends(view));
  }

  /** Fail static: with no view, keep showing what was last known about the backends. */
  private static void countsKept(BackendPoolStatus status, BackendPoolStatus previous) {
    status.setTotal(previous.getTotal());
    status.setAvailable(previous.getAvailable());
    status.setDown(previous.getDown());
    status.setEjected(previous.getEjected());
    status.setPanic(previous.getPanic());
    status.setAvailability(previous.getAvailability());
    status.setBackends(previous.getBackends());
  }

  private static void countsNone(BackendPoolStatus status) {
    status.setTotal(0);
    status.setAvailable(0);
    status.setDown(0);
    status.setEjected(0);
    status.setPanic(false);
    status.setAvailability("0/0");
    status.setBackends(List.of());
  }

  /**
   * With {@code spec.targets}: sets {@code TargetsResolved} (True, or False with reason {@code
   * NotResolving} and the names that do not resolve); without ({@code unresolved} null): none.
   */
  static void resolved(
      BackendPoolStatus status, BackendPoolStatus previous, List<String> unresolved, long nowMs) {
    List<io.fabric8.kubernetes.api.model.Condition> all = new java.util.ArrayList<>();
    if (status.getConditions() != null) {
      status.getConditions().stream()
          .filter(c -> !Conditions.TARGETS_RESOLVED.equals(c.getType()))
          .forEach(all::add);
    }
    if (unresolved != null) {
      ConditionSet set =
          new ConditionSet(
              previous == null ? null : previous.getConditions(),
              Instant.ofEpochMilli(nowMs).toString(),
              status.getObservedGeneration());
      if (unresolved.isEmpty()) {
        set.set(
            Conditions.TARGETS_RESOLVED,
            true,
            Conditions.RESOLVED,
            "every hostname target resolves");
      } else {
        set.set(
            Conditions.TARGETS_RESOLVED,
            false,
            Conditions.NOT_RESOLVING,
            String.join("; ", unresolved));
      }
      all.addAll(set.build());
    }
    status.setConditions(all);
  }

  /**
   * Sharded: names the owner in {@code status.shard} and sets the {@code Probing} condition (any
   * earlier one in {@code status} replaced): True while {@code owner} probes the pool, False
   * (reason {@code HandingOver}) when {@code owner} is null, in the status the last owner {@code
   * former} writes as it hands the pool to nobody. The status an owner writes as it hands the pool
   * over names the next owner exactly as that owner would: its first status changes nothing.
   */
  static void owned(
      BackendPoolStatus status,
      BackendPoolStatus previous,
      String owner,
      String former,
      long nowMs) {
    status.setShard(owner);
    ConditionSet probing =
        new ConditionSet(
            previous == null ? null : previous.getConditions(),
            Instant.ofEpochMilli(nowMs).toString(),
            status.getObservedGeneration());
    if (owner != null) {
      probing.set(
          Conditions.PROBING, true, Conditions.OWNED, "shard " + owner + " probes this pool");
    } else {
      probing.set(
          Conditions.PROBING,
          false,
          Conditions.HANDING_OVER,
          "shard " + former + " stopped probing; no shard is assigned yet");
    }
    List<io.fabric8.kubernetes.api.model.Condition> all = new java.util.ArrayList<>();
    if (status.getConditions() != null) {
      status.getConditions().stream()
          .filter(c -> !Conditions.PROBING.equals(c.getType()))
          .forEach(all::add);
    }
    all.addAll(probing.build());
    status.setConditions(all);
  }

  private static void readyCondition(ConditionSet conditions, PoolView view, Problem problem) {
    if (problem != null) {
      conditions.set(Conditions.READY, false, problem.reason(), problem.message());
      return;
    }
    AvailabilitySnapshot snap = view.snapshot();
    int ready = snap.ready().size();
    if (ready == 0) {
      conditions.set(
          Conditions.READY,
          false,
          Conditions.BACKENDS_UNAVAILABLE,
          "no backend is published as ready ("
              + snap.counts().unknown()
              + " not probed yet, "
              + snap.counts().down()
              + " down, "
              + snap.counts().ejected()
              + " ejected, "
              + snap.counts().draining()
              + " draining)");
      return;
    }
    conditions.set(
        Conditions.READY,
        true,
        Conditions.PUBLISHED,
        ready + " of " + snap.counts().total() + " backends published as ready");
  }

  private static void panicCondition(ConditionSet conditions, PoolView view) {
    if (view != null && view.snapshot().panic()) {
      AvailabilitySnapshot.Counts c = view.snapshot().counts();
      conditions.set(
          Conditions.PANIC,
          true,
          Conditions.PANIC_THRESHOLD_REACHED,
          c.available()
              + " of "
              + c.decided()
              + " decided backends available, below the panic threshold: all "
              + c.decided()
              + " are published as ready, healthy or not");
    } else {
      conditions.set(
          Conditions.PANIC, false, Conditions.ENOUGH_AVAILABLE, "enough backends available");
    }
  }

  private static void degradedCondition(ConditionSet conditions, PoolView view) {
    if (view == null) {
      conditions.set(Conditions.DEGRADED, false, Conditions.ALL_AVAILABLE, "no backends observed");
      return;
    }
    AvailabilitySnapshot.Counts c = view.snapshot().counts();
    int unavailable = c.total() - c.available();
    if (unavailable > 0) {
      conditions.set(
          Conditions.DEGRADED,
          true,
          Conditions.BACKENDS_UNAVAILABLE,
          unavailable
              + " of "
              + c.total()
              + " backends unavailable: "
              + c.down()
              + " down, "
              + c.ejected()
              + " ejected, "
              + c.draining()
              + " draining, "
              + c.unknown()
              + " not probed yet");
    } else {
      conditions.set(
          Conditions.DEGRADED, false, Conditions.ALL_AVAILABLE, "every backend is available");
    }
  }

  /**
   * {@code CheckerSuspect}: True while the replica deciding the pool doubts its own probes
   * (docs/design.md §8), reason {@code Confirming} (its Downs go to voters in other zones) or
   * {@code Frozen} (no live voter in another zone: no new Down); False ({@code Healthy}) otherwise,
   * and without a view (nothing decides the pool here).
   */
  private static void checkerSuspectCondition(ConditionSet conditions, PoolView view) {
    CheckerDoubt doubt = view == null ? CheckerDoubt.TRUSTED : view.doubt();
    String why =
        "this checker is Suspect: its failing share is far above its peers' (>= 30% and >= 3 x"
            + " their median), so its own network may be what fails";
    switch (doubt) {
      case CONFIRMING ->
          conditions.set(
              Conditions.CHECKER_SUSPECT,
              true,
              Conditions.CONFIRMING,
              why + "; each Down it sees goes to the voters in other zones before it takes effect");
      case FROZEN ->
          conditions.set(
              Conditions.CHECKER_SUSPECT,
              true,
              Conditions.FROZEN,
              why
                  + "; no voter in another zone is live to confirm a Down, so it publishes no new"
                  + " Down (Ups go through)");
      case TRUSTED ->
          conditions.set(
              Conditions.CHECKER_SUSPECT,
              false,
              Conditions.HEALTHY,
              view == null
                  ? "no checker decides this pool here"
                  : "this checker is not Suspect: its failing share is not far above its peers' (a"
                      + " replica alone never is)");
    }
  }

  private static List<BackendStatus> backends(PoolView view) {
    List<BackendSnapshot> sorted = new ArrayList<>(view.backends());
    sorted.sort(
        Comparator.comparing(BackendSnapshot::available).thenComparing(b -> b.member().id()));
    int n = Math.min(MAX_BACKENDS_LISTED, sorted.size());
    List<BackendStatus> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(backend(sorted.get(i)));
    }
    return out;
  }

  /**
   * The state status shows for one backend; metrics use the same mapping. Maint first, then
   * Draining (a terminating or not Ready Pod, or a drain hold), then Down (an agent's down
   * included) > Ejected > Damped > Up (docs/design.md §2.1, docs/decision.md).
   */
  public static BackendState stateOf(BackendView d) {
    if (d.hold().kind() == BackendHold.Kind.MAINT) {
      return BackendState.MAINT;
    }
    if (d.draining() || d.hold().held()) {
      return BackendState.DRAINING;
    }
    if (d.hold().agentDown()) {
      return BackendState.DOWN;
    }
    if (d.ejected() && d.state() != dev.vigil.health.ActiveState.DOWN) {
      return BackendState.EJECTED;
    }
    if (d.damped() && d.state() == dev.vigil.health.ActiveState.UP) {
      return BackendState.DAMPED;
    }
    return switch (d.state()) {
      case UP -> BackendState.UP;
      case DOWN -> BackendState.DOWN;
      case UNKNOWN -> BackendState.UNKNOWN;
    };
  }

  private static EjectingBatch ejectingBatch(BatchKey k) {
    EjectingBatch e = new EjectingBatch();
    e.setKey(k.digest());
    e.setAt(Instant.ofEpochMilli(k.at()).toString());
    return e;
  }

  private static BackendStatus backend(BackendSnapshot b) {
    BackendView d = b.decision();
    BackendStatus s = new BackendStatus();
    s.setPod(b.member().id());
    s.setAddress(b.member().ip());
    s.setState(stateOf(d));
    s.setAvailable(d.available());
    s.setSince(Instant.ofEpochMilli(b.since()).toString());
    s.setEjections(d.multiplier());
    if (d.ejected()) {
      s.setEjectedUntil(Instant.ofEpochMilli(d.ejectedUntil()).toString());
    }
    if (!b.ejectedBy().isEmpty()) {
      s.setEjectedBy(b.ejectedBy().stream().map(PoolStatusAggregator::ejectingBatch).toList());
    }
    if (d.merit() > 0) {
      s.setMerit(d.merit());
      s.setMeritTime(Instant.ofEpochMilli(d.meritAt()).toString());
    }
    if (d.damped()) {
      s.setDampedUntil(Instant.ofEpochMilli(d.releaseAt()).toString());
    }
    if (b.lastProbe() != null) {
      LastProbe p = new LastProbe();
      p.setAt(Instant.ofEpochMilli(b.lastProbe().at()).toString());
      p.setOk(b.lastProbe().ok());
      p.setLatencyMs(b.lastProbe().latencyMs());
      p.setDetail(b.lastProbe().detail());
      s.setLastProbe(p);
    }
    s.setReason(reason(b));
    if (b.votes() != null) {
      s.setConfirmedBy(b.votes().down());
      s.setRefutedBy(b.votes().up());
      s.setAbstained(b.votes().abstained());
    }
    return s;
  }

  /**
   * The dry-run reason, else what holds the backend, else the member's note (a bad admin-state
   * annotation, a hostname that does not resolve).
   */
  private static String reason(BackendSnapshot b) {
    if (b.wouldEject() != null) {
      return b.wouldEject();
    }
    String held = holdReason(b.hold());
    return held != null ? held : b.member().note();
  }

  /**
   * What holds a backend, for status and {@code kubectl vigil why}: {@code drain by admin}, {@code
   * maint by agent: <reason>}, {@code down by agent: <reason>}; null without a hold.
   */
  static String holdReason(BackendHold h) {
    String text;
    if (h.held()) {
      text = h.kind().name().toLowerCase(java.util.Locale.ROOT) + " by " + h.source();
      if (h.agentDown()) {
        text += ", down by agent";
      }
    } else if (h.agentDown()) {
      text = "down by agent";
    } else {
      return null;
    }
    return h.reason().isEmpty() ? text : text + ": " + h.reason();
  }
}
