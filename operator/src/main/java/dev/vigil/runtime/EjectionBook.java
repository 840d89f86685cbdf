package dev.vigil.runtime;

import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;

/**
 * A pool's ejection bookkeeping: tells the sink of ejections, refusals by the cap and dry-run
 * ejections, keeps the dry-run reasons status shows until the would-be ejection ends, and reports
 * only the first refusal of a run (the rest are counted). Runs on the pool's context.
 */
final class EjectionBook {
  private final PoolKey key;
  private final TransitionSink sink;

  /** The backends showing a dry-run reason, cleared at the sweep after it stops being true. */
  private final Set<TrackedBackend> dryRuns = new HashSet<>();

  EjectionBook(PoolKey key, TransitionSink sink) {
    this.key = key;
    this.sink = sink;
  }

  /**
   * Applies one decision to its backend; true when it changed something status or slices show. A
   * refusal by the cap shows nothing new.
   */
  boolean apply(TrackedBackend t, EjectionNotice n, long now) {
    switch (n.kind()) {
      case EJECTED -> {
        t.since = now;
        t.refused = false;
        forget(t);
        sink.ejected(key, t.id(), n.ejectedUntil(), n.reason());
        return true;
      }
      case REFUSED_BY_CAP -> {
        refused(t, n.reason());
        return false;
      }
      case WOULD_EJECT -> {
        t.wouldEject(n.dryRunReason(), n.ejectedUntil());
        dryRuns.add(t);
        sink.wouldEject(key, t.id(), n.reason());
        return true;
      }
      default -> {
        return false;
      }
    }
  }

  /** A request to the backend succeeded: its run of refusals ended. */
  void succeeded(TrackedBackend t) {
    t.refused = false;
  }

  private void refused(TrackedBackend t, String why) {
    if (t.refused) {
      sink.ejectionRefusedAgain(key, t.id());
    } else {
      t.refused = true;
      sink.ejectionRefused(key, t.id(), why);
    }
  }

  /** Clears the dry-run reasons whose would-be ejection has ended; true when any was cleared. */
  boolean expireDryRuns(long now) {
    boolean cleared = false;
    for (Iterator<TrackedBackend> it = dryRuns.iterator(); it.hasNext(); ) {
      TrackedBackend t = it.next();
      if (t.wouldEjectUntil() <= now) {
        t.clearWouldEject();
        it.remove();
        cleared = true;
      }
    }
    return cleared;
  }

  /** The backend was ejected or left the pool: its dry-run reason goes. */
  void forget(TrackedBackend t) {
    t.clearWouldEject();
    dryRuns.remove(t);
  }
}
