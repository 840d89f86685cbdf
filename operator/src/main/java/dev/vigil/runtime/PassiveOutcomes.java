package dev.vigil.runtime;

import dev.vigil.health.EjectionDecision;
import dev.vigil.health.Origin;
import dev.vigil.health.PoolHealth;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Applies real-request outcomes (docs/design.md §4) to a pool's decision core and reports what they
 * decided: the passive half of a {@link PoolRuntime}, apart from its probe results and timers. Runs
 * on the pool's context; {@link Shown} hears once per call whether something status or slices show
 * changed.
 */
final class PassiveOutcomes {
  /** Hears, once per outcome or batch, whether status or slices show a change. */
  @FunctionalInterface
  interface Shown {
    void after(boolean material);
  }

  private final PoolHealth health;
  private final TrackedBackends backends;
  private final EjectionBook ejections;
  private final EjectionKeys keys;
  private final LongSupplier clock;
  private final Shown shown;

  /** Outcomes of batches applied to a backend (written on the pool's context only). */
  private volatile long applied;

  PassiveOutcomes(
      PoolHealth health,
      TrackedBackends backends,
      EjectionBook ejections,
      EjectionKeys keys,
      LongSupplier clock,
      Shown shown) {
    this.health = health;
    this.backends = backends;
    this.ejections = ejections;
    this.keys = keys;
    this.clock = clock;
    this.shown = shown;
  }

  /** One outcome for the backend at {@code ip}; null when no backend of the pool has it. */
  EjectionDecision apply(String ip, boolean ok, Origin origin) {
    TrackedBackend t = backends.byIp(ip);
    if (t == null) {
      return null;
    }
    long now = clock.getAsLong();
    EjectionDecision d = health.onRequestOutcome(t.backend, ok, origin, -1, now);
    shown.after(report(t, d, ok, origin, now));
    return d;
  }

  /**
   * A batch, with at most one {@link Shown} call for it (also when one outcome throws: what was
   * applied before is shown). Outcomes for addresses that are no backend of the pool are reported
   * back by index. A batch under a reporter's key ({@code keySlot}, else null) that ejected a
   * backend of the pool before, here or at the owner this one restored from, is not applied again
   * ({@link EjectionKeys}); one that ejects leaves its key on the backend it ejected.
   */
  AppliedOutcomes applyAll(List<OutcomeReport> outcomes, String keySlot) {
    if (keySlot != null && keys.knows(keySlot, clock.getAsLong())) {
      return repeat(outcomes);
    }
    BitSet unknown = new BitSet();
    List<AppliedOutcomes.Decided> decided = new ArrayList<>(0);
    boolean material = false;
    try {
      for (int i = 0; i < outcomes.size(); i++) {
        OutcomeReport o = outcomes.get(i);
        TrackedBackend t = backends.byIp(o.ip());
        if (t == null) {
          unknown.set(i);
          continue;
        }
        long now = clock.getAsLong();
        applied++;
        EjectionDecision d =
            health.onRequestOutcome(t.backend, o.ok(), o.origin(), o.latencyMs(), now);
        material |= report(t, d, o.ok(), o.origin(), now);
        if (d.kind() != EjectionDecision.Kind.NOT_NEEDED) {
          decided.add(new AppliedOutcomes.Decided(t.id(), d));
        }
        if (keySlot != null && d.kind() == EjectionDecision.Kind.EJECTED) {
          keys.ejected(t, keySlot, now);
        }
      }
    } finally {
      shown.after(material);
    }
    return new AppliedOutcomes(unknown, decided);
  }

  /** A batch applied before: nothing applied, its unknown addresses as the pool has them now. */
  private AppliedOutcomes repeat(List<OutcomeReport> outcomes) {
    BitSet unknown = new BitSet();
    for (int i = 0; i < outcomes.size(); i++) {
      if (backends.byIp(outcomes.get(i).ip()) == null) {
        unknown.set(i);
      }
    }
    return new AppliedOutcomes(unknown, List.of(), true);
  }

  long applied() {
    return applied;
  }

  /** Reports one outcome's decision; true when it changed something status or slices show. */
  private boolean report(
      TrackedBackend t, EjectionDecision d, boolean ok, Origin origin, long now) {
    if (ok) {
      ejections.succeeded(t);
    }
    backends.passive(t, ok, now);
    return d.kind() != EjectionDecision.Kind.NOT_NEEDED
        && ejections.apply(t, EjectionNotice.of(d, origin, health.settings()), now);
  }
}
