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
}
