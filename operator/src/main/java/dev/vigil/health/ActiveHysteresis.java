package dev.vigil.health;

/**
 * The active half of one {@link PoolHealth}: hysteresis over probe results (docs/design.md §2 rule
 * 2 and 8, fail-fast §2.2). A pass clears the fail run, a fail the pass run; {@code fall} fails in
 * a row take Up to Down, {@code rise} passes Down to Up; the first result of an Unknown backend
 * decides; every flip Up/Down penalizes the backend when damping is on. {@link PoolHealth} brackets
 * every call with its {@link PoolLedger}.
 */
final class ActiveHysteresis {
  private final PoolLedger ledger;
  private final PassiveEjector ejector;
  private final FlapDamping damping;

  ActiveHysteresis(PoolLedger ledger, PassiveEjector ejector, FlapDamping damping) {
    this.ledger = ledger;
    this.ejector = ejector;
    this.damping = damping;
  }

  Transition pass(Backend b, long now, HealthSettings settings) {
    b.failRun = 0;
    b.confirming = false; // the owner's own verdict is no longer Down
    if (b.passRun != Integer.MAX_VALUE) {
      b.passRun++;
    }
    if (b.ejected && settings.unejectOnActivePass()) {
      ledger.change(b);
      ejector.end(b);
      b.ejectedUntil = now;
      ledger.tally(b, 1);
    }
    if (b.state == ActiveState.UP) {
      return Transition.UNCHANGED;
    }
    if (b.state == ActiveState.DOWN && b.passRun < settings.rise()) {
      return Transition.PENDING;
    }
    return flip(b, ActiveState.UP, now, settings);
  }

  Transition fail(
      Backend b, boolean failFast, long now, HealthSettings settings, Confirmation confirmation) {
    b.passRun = 0;
    if (b.failRun != Integer.MAX_VALUE) {
      b.failRun++;
    }
    if (b.state == ActiveState.DOWN) {
      return Transition.UNCHANGED;
    }
    if (b.state == ActiveState.UP && b.failRun < settings.fall() && !failFast) {
      return Transition.PENDING;
    }
    if (b.state == ActiveState.UP && confirmation.mode() != Confirmation.Mode.ALONE) {
      return held(b, confirmation.mode());
    }
    b.confirming = false;
    return flip(b, ActiveState.DOWN, now, settings);
  }

  /** An Up backend whose owner's verdict is Down, when that verdict alone does not decide. */
  private static Transition held(Backend b, Confirmation.Mode mode) {
    if (mode == Confirmation.Mode.FREEZE) {
      return Transition.HELD;
    }
    if (b.confirming) {
      return Transition.PENDING;
    }
    b.confirming = true;
    return Transition.CONFIRM;
  }

  /**
   * The voters' answers on a Down verdict out to them (docs/design.md §8 rule 2): Down iff the
   * owner's and the voters' down votes are more than {@code downPercent} of the deciding voters;
   * otherwise the backend stays Up with its fail run cleared. Nothing out to the voters: unchanged.
   */
  Transition votes(
      Backend b, int down, int up, long now, HealthSettings settings, Confirmation confirmation) {
    if (!b.confirming || b.state != ActiveState.UP) {
      return Transition.UNCHANGED;
    }
    b.confirming = false;
    if (confirmation.down(1 + down, 1 + down + up)) {
      return flip(b, ActiveState.DOWN, now, settings);
    }
    b.failRun = 0;
    return Transition.UNCHANGED;
  }

  /**
   * Sets the new state; a flip between Up and Down (not the first result of an Unknown backend)
   * penalizes the backend when damping is on.
   */
  private Transition flip(Backend b, ActiveState to, long now, HealthSettings settings) {
    boolean flap = b.state != ActiveState.UNKNOWN;
    ledger.change(b);
    b.state = to;
    ledger.tally(b, 1);
    if (flap) {
      damping.penalize(b, settings.damping(), now, ledger);
    }
    return Transition.CHANGED;
  }
}
