package dev.vigil.probe;

import dev.vigil.budget.ProbeClass;
import dev.vigil.budget.ProbeStretch;
import dev.vigil.health.HealthSettings;

/**
 * The active checks of one pool: one jittered probe loop per backend. Results go to the {@link
 * Results} given when the loop was made, on the pool's context; what the decision made of a result
 * comes back as its answer (the backend's new probe phase), so a result travels one way: from the
 * prober to the decision, never back through a second call.
 */
public interface Probing {
  /** Receives the probe results of one pool on the pool's context. */
  @FunctionalInterface
  interface Results {
    /**
     * Takes one result.
     *
     * @return the backend's probe class when the result changed it (its next probe follows that
     *     class's interval), else null
     */
    ProbeClass result(String id, ProbeResult result);

    /**
     * Takes one answer of a backend's agent ({@code active.agent}); it goes to the backend's hold
     * (docs/decision.md), not to the rise/fall counters. Ignored by default.
     */
    default void agent(String id, AgentReply reply) {}
  }

  void configure(CheckSpec check, HealthSettings cadence);

  /** Starts probing a backend in class {@code phase} (a restored backend may start Down). */
  void add(String id, ProbeTarget target, ProbeClass phase);

  void remove(String id);

  /**
   * A backend's class changed outside a probe result (a passive failure made it hot, docs/design.md
   * §9): its next probe follows the new class's interval. On the pool's context.
   */
  default void classify(String id, ProbeClass c) {}

  /** The pool's share of the probe budget, as a stretch per class; from any thread. */
  default void stretch(ProbeStretch stretch) {}

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
