package dev.vigil.runtime;

import dev.vigil.health.HealthSettings;
import dev.vigil.health.ProbePhase;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;

/**
 * The active checks of one pool: one jittered probe loop per backend. Results go to the callback
 * given when the loop was made, on the pool's context.
 */
public interface Probing {
  void configure(CheckSpec check, HealthSettings cadence);

  void add(String id, ProbeTarget target);

  void remove(String id);

  /** The backend's probe phase changed: its next probe follows that phase's interval. */
  default void phase(String id, ProbePhase phase) {}

  void close();

  /**
   * Probe starts that waited because the previous probe of that backend was still in flight, since
   * the pool started (read from any thread: approximate while probing). Rising steadily, the prober
   * cannot keep the pool's cadence: its probes take as long as the interval.
   */
  default long deferredStarts() {
    return 0;
  }

  /**
   * Probe starts that waited because too many probes started on their event loop were unanswered
   * (the prober is short of CPU; see {@code ProbeScheduler.MAX_BACKLOG}), since the pool started
   * (read from any thread: approximate while probing).
   */
  default long heldStarts() {
    return 0;
  }

  /** Event loops the pool's probes run on (issue 15 lanes), the pool's own included. */
  default int lanes() {
    return 1;
  }
}
