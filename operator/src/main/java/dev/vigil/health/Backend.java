package dev.vigil.health;

/**
 * One backend of a {@link PoolHealth}: the handle that {@link PoolHealth#add(String)} returns and
 * that events take directly (no map lookup on the hot path), and a read-only view of its state for
 * status writers.
 *
 * <p>Read it only from the pool's own thread; for other threads take {@link #view()}. A handle
 * whose backend was removed is detached ({@link #isMember()} false): events on it are ignored.
 */
public final class Backend {
  final String id;
  final long serial;

  PoolHealth pool;
  int index = -1; // position in the pool's member array
  int heapIndex = -1; // position in the pool's ejection-deadline heap, -1 when not ejected
  int decayIndex = -1; // position in the pool's list of backends with a multiplier above 0
  long touchEpoch = -1; // the pool event that last recorded this backend's published bits
  // Outcomes counted for the statistical rules since the last sweep (OutlierDetector); made on the
  // first outcome counted, so a backend nobody reports on (or a pool without those rules) has none.
  IntervalTraffic traffic;

  ActiveState state = ActiveState.UNKNOWN;
  int passRun;
  int failRun;
  int upstreamErrors;
  int localErrors;
  int multiplier;
  boolean ejected;
  long ejectedUntil;
  boolean draining;
  // Admin state and agent (docs/decision.md): a hold, and whether the agent reports it down.
  BackendHold hold = BackendHold.NONE;
  // Flap damping (docs/design.md §2.1): damped until merit.releaseAt; the merit made at first use.
  boolean damped;
  DampingMerit merit;
  // Checker quorum (docs/design.md §8): the owner's Down verdict is out to the voters.
  boolean confirming;
  // Failures within a window (docs/design.md §2.2): the last windowFailures failure times, made on
  // first
  // use.
  FailureWindow window;

  Backend(PoolHealth pool, String id, long serial) {
    this.pool = pool;
    this.id = id;
    this.serial = serial;
  }

  /** The runtime's key: a Pod name or {@code ip:port}. */
  public String id() {
    return id;
  }

  /** False once the backend has been removed from its pool. */
  public boolean isMember() {
    return pool != null;
  }

  public ActiveState state() {
    return state;
  }

  /** Consecutive passing probes. */
  public int passRun() {
    return passRun;
  }

  /** Consecutive failing probes. */
  public int failRun() {
    return failRun;
  }

  /** Consecutive failed real requests on the upstream run (every error when not split). */
  public int upstreamErrors() {
    return upstreamErrors;
  }

  /** Consecutive local-origin failed real requests (only when {@code splitLocalOrigin}). */
  public int localOriginErrors() {
    return localErrors;
  }

  /**
   * The ejection multiplier: times ejected, less one per sweep that found the backend neither
   * ejected nor erring. The next ejection lasts {@code base x (multiplier + 1)}, capped. Status
   * writers publish this as {@code ejections} so that {@link PoolHealth#restore} round-trips.
   */
  public int multiplier() {
    return multiplier;
  }

  public boolean ejected() {
    return ejected;
  }

  /**
   * When the current (or last) ejection ends (epoch ms); 0 if never ejected. An ejection ended
   * early by a passing probe has this set to the time it ended.
   */
  public long ejectedUntil() {
    return ejectedUntil;
  }

  public boolean draining() {
    return draining;
  }

  /** What the admin state and the agent make of this backend; {@link BackendHold#NONE} at first. */
  public BackendHold hold() {
    return hold;
  }

  /**
   * Out of the ready set and the panic and cap denominators: draining, or held by admin or agent.
   */
  boolean heldOut() {
    return draining || hold.held();
  }

  /** The health verdict alone: Up, not ejected, not damped, and not reported down by its agent. */
  public boolean healthy() {
    return state == ActiveState.UP && !ejected && !damped && !hold.agentDown();
  }

  /**
   * The flap-damping merit as last set (at {@link #meritAt()}), before decay; 0 when never
   * penalized. Its value at time t is {@code merit x 2^(-(t - meritAt) / halfLife)}.
   */
  public double merit() {
    return merit == null ? 0 : merit.value;
  }

  /** When {@link #merit()} was last set (epoch ms); 0 when never. */
  public long meritAt() {
    return merit == null ? 0 : merit.at;
  }

  /** Held back by flap damping (docs/design.md §2.1): not available until {@link #releaseAt()}. */
  public boolean damped() {
    return damped;
  }

  /** When a damped backend is released (epoch ms); meaningless when not damped. */
  public long releaseAt() {
    return merit == null ? 0 : merit.releaseAt;
  }

  /** The damping merit, made now if this backend has none yet. */
  DampingMerit dampingMerit() {
    if (merit == null) {
      merit = new DampingMerit();
    }
    return merit;
  }

  /** Healthy and neither draining nor held (its own verdict, panic aside). */
  public boolean available() {
    return healthy() && !heldOut();
  }

  /** Outcomes counted for the statistical rules this interval. */
  long intervalRequests() {
    return traffic == null ? 0 : traffic.requests;
  }

  /** Latency samples counted for the latency rule this interval. */
  long intervalLatencySamples() {
    return traffic == null ? 0 : traffic.latencySamples;
  }

  /** Which interval the scheduler should use for this backend's next probe. */
  public ProbePhase phase() {
    return ProbePhase.of(state, passRun, failRun);
  }

  /** An immutable copy of this backend's state. */
  public BackendView view() {
    return new BackendView(
        id,
        state,
        passRun,
        failRun,
        upstreamErrors,
        localErrors,
        multiplier,
        ejected,
        ejectedUntil,
        draining,
        available(),
        damped,
        merit(),
        meritAt(),
        damped ? releaseAt() : 0,
        hold);
  }

  @Override
  public String toString() {
    return view().toString();
  }
}
