package dev.vigil.health;

/**
 * Told, on the pool's own thread and in the middle of the event that caused it, when flap damping
 * (docs/design.md §2.1) holds a backend back or releases it. Implementations must only record: no
 * calls back into the pool.
 */
public interface DampingListener {
  /** b became damped; {@link Backend#releaseAt()} says until when. */
  void damped(Backend b);

  /** b was released (its merit decayed to the reuse threshold, or damping was turned off). */
  void released(Backend b);

  /** A listener that ignores everything. */
  DampingListener NONE =
      new DampingListener() {
        @Override
        public void damped(Backend b) {}

        @Override
        public void released(Backend b) {}
      };
}
