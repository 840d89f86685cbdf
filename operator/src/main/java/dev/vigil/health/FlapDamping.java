package dev.vigil.health;

/**
 * Flap damping of one {@link PoolHealth} (docs/design.md §2.1), after BGP route-flap damping (RFC
 * 2439). Each backend carries a merit {@code m} set at {@code t0}; its value at t is {@code m x
 * 2^(-(t - t0) / halfLife)}. An active transition Up to Down or Down to Up decays the merit to now,
 * adds the penalty and caps it at the ceiling; a merit above the suppress threshold right after a
 * penalty damps the backend, which is released at the first millisecond its decayed merit is at or
 * below the reuse threshold.
 *
 * <p>O(1) per penalty that changes nothing, O(log d) for the d damped backends otherwise: release
 * times sit in a min-heap, so the runtime arms one timer for {@link #nextRelease()}. Every change
 * of the damped flag is bracketed by the ledger's change/tally, as for ejections.
 */
final class FlapDamping {
  private final ReleaseDeadlines releases = new ReleaseDeadlines();
  private long next = Long.MAX_VALUE; // releases.nextDeadline(), cached for the hot path
  private DampingListener listener = DampingListener.NONE;
  private long dampings;
  private long releasesDone;

  void listener(DampingListener l) {
    listener = l == null ? DampingListener.NONE : l;
  }

  long nextRelease() {
    return next;
  }

  long dampings() {
    return dampings;
  }

  long releases() {
    return releasesDone;
  }

  /** After an active transition Up to Down or Down to Up; nothing when damping is off. */
  void penalize(Backend b, DampingSettings d, long now, PoolLedger ledger) {
    if (d == null) {
      return;
    }
    DampingMerit merit = b.dampingMerit();
    double m = Math.min(d.decay(merit.value, merit.at, now) + d.penalty(), d.ceiling());
    merit.value = m;
    merit.at = now;
    if (b.damped) {
      retime(b, d.releaseAt(m, now));
    } else if (m > d.suppressThreshold()) {
      ledger.change(b);
      b.damped = true;
      merit.releaseAt = d.releaseAt(m, now);
      releases.add(b);
      next = releases.nextDeadline();
      ledger.tally(b, 1);
      dampings++;
      listener.damped(b);
    }
  }

  /** Releases every damped backend due at {@code now}. */
  void expire(long now, PoolLedger ledger) {
    while (now >= next) {
      release(releases.peek(), ledger);
    }
  }

  /** b leaves the pool: forget its release. The ledger has already uncounted it. */
  void forget(Backend b) {
    if (b.merit != null && b.merit.releaseIndex >= 0) {
      releases.remove(b);
      next = releases.nextDeadline();
    }
  }

  /**
   * New settings: with damping off every damped backend is released now; otherwise each release is
   * re-timed from its merit under the new half-life and reuse threshold (released at the next event
   * at or after that time). O(d log d).
   */
  void apply(DampingSettings d, PoolLedger ledger) {
    for (Backend b : releases.members()) {
      if (d == null) {
        release(b, ledger);
      } else {
        retime(b, d.releaseAt(b.merit.value, b.merit.at));
      }
    }
  }

  /**
   * Restores b's merit and damped flag from status. Damped only when it was, damping is on, and the
   * decayed merit is still above the reuse threshold, so a restart never releases early and never
   * damps anew. The caller brackets it with the ledger's change/tally.
   */
  void restore(Backend b, DampingState state, DampingSettings d, long now) {
    if (b.damped) {
      b.damped = false;
      forget(b);
    }
    if (b.merit != null || !state.equals(DampingState.NONE)) {
      DampingMerit merit = b.dampingMerit();
      merit.value = state.merit();
      merit.at = state.meritAt();
    }
    if (state.damped()
        && d != null
        && d.decay(state.merit(), state.meritAt(), now) > d.reuseThreshold()) {
      b.damped = true;
      b.merit.releaseAt = d.releaseAt(state.merit(), state.meritAt());
      releases.add(b);
      next = releases.nextDeadline();
    }
  }

  private void retime(Backend b, long releaseAt) {
    releases.remove(b);
    b.merit.releaseAt = releaseAt;
    releases.add(b);
    next = releases.nextDeadline();
  }

  private void release(Backend b, PoolLedger ledger) {
    ledger.change(b);
    b.damped = false;
    releases.remove(b);
    next = releases.nextDeadline();
    ledger.tally(b, 1);
    releasesDone++;
    listener.released(b);
  }
}
