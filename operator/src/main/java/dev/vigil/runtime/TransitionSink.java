package dev.vigil.runtime;

import dev.vigil.health.AvailabilitySnapshot;

/**
 * Where a pool's transitions go: Events, log lines and metrics. Called on the pool's context;
 * implementations must not block. Every method does nothing unless overridden, so a sink states
 * only what it keeps.
 */
public interface TransitionSink {
  default void stateChanged(PoolKey pool, String backend, String from, String to, String reason) {}

  default void ejected(PoolKey pool, String backend, long untilMs, String why) {}

  /** The cap refused to eject the backend: the first refusal of a run of them. */
  default void ejectionRefused(PoolKey pool, String backend, String why) {}

  /**
   * The cap refused the backend again, within the same run of refusals (its errors went on, nothing
   * shown changed): counted, never logged or rebuilt again. The run ends with a success, an
   * ejection, or the backend leaving.
   */
  default void ejectionRefusedAgain(PoolKey pool, String backend) {}

  default void wouldEject(PoolKey pool, String backend, String why) {}

  default void panicChanged(PoolKey pool, boolean panic, AvailabilitySnapshot.Counts counts) {}

  /** An ejection ended (its time ran out, or a passing probe ended it early). */
  default void unejected(PoolKey pool, String backend, String why) {}

  /** Flap damping held a backend back until {@code untilMs} (docs/design.md §2.1). */
  default void damped(PoolKey pool, String backend, long untilMs, String why) {}

  /** Flap damping released a backend. */
  default void released(PoolKey pool, String backend, String why) {}

  /**
   * The voters did not confirm the owner's Down verdict (docs/design.md §8): the backend stays Up,
   * its fail run cleared.
   */
  default void downNotConfirmed(PoolKey pool, String backend, String why) {}

  /** This replica is Suspect and alone: a Down verdict is held, the backend stays Up. */
  default void downHeld(PoolKey pool, String backend, String why) {}

  /** The pool's runtime closed: forget what is kept per pool. */
  default void poolClosed(PoolKey pool) {}

  /** A sink that drops everything. */
  TransitionSink NONE = new TransitionSink() {};
}
