package dev.vigil.runtime;

import dev.vigil.health.AvailabilitySnapshot;

/**
 * Where a pool's transitions go: Events, log lines and metrics. Called on the pool's context;
 * implementations must not block.
 */
public interface TransitionSink {
  void stateChanged(PoolKey pool, String backend, String from, String to, String reason);

  void ejected(PoolKey pool, String backend, long untilMs, String why);

  /** The cap refused to eject the backend: the first refusal of a run of them. */
  void ejectionRefused(PoolKey pool, String backend, String why);

  /**
   * The cap refused the backend again, within the same run of refusals (its errors went on, nothing
   * shown changed): counted, never logged or rebuilt again. The run ends with a success, an
   * ejection, or the backend leaving.
   */
  default void ejectionRefusedAgain(PoolKey pool, String backend) {}

  void wouldEject(PoolKey pool, String backend, String why);

  void panicChanged(PoolKey pool, boolean panic, AvailabilitySnapshot.Counts counts);

  /** An ejection ended (its time ran out, or a passing probe ended it early). */
  default void unejected(PoolKey pool, String backend, String why) {}

  /** Flap damping held a backend back until {@code untilMs} (docs/design.md §2.1). */
  default void damped(PoolKey pool, String backend, long untilMs, String why) {}

  /** Flap damping released a backend. */
  default void released(PoolKey pool, String backend, String why) {}

  /** The pool's runtime closed: forget what is kept per pool. */
  default void poolClosed(PoolKey pool) {}

  /** A sink that drops everything. */
  TransitionSink NONE =
      new TransitionSink() {
        @Override
        public void stateChanged(PoolKey p, String b, String f, String t, String r) {}

        @Override
        public void ejected(PoolKey p, String b, long u, String w) {}

        @Override
        public void ejectionRefused(PoolKey p, String b, String w) {}

        @Override
        public void wouldEject(PoolKey p, String b, String w) {}

        @Override
        public void panicChanged(PoolKey p, boolean panic, AvailabilitySnapshot.Counts c) {}
      };
}
