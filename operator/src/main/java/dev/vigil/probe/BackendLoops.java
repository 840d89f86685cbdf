package dev.vigil.probe;

import java.util.Map;

/**
 * Per-backend loops that run beside a pool's health-check probes and follow the same members: the
 * agent checks ({@link AgentLoops}) and the gRPC Watch streams ({@link WatchStreams}). {@link
 * ScheduledProbing} hands each of them every configure, add, remove and close in one place, so a
 * new kind of loop beside the probes is one more entry, not one more copy of the wiring. All calls
 * on the pool's context.
 */
interface BackendLoops {
  /**
   * The pool's check changed: restart, start or stop the loops as the new check asks.
   *
   * @param members every member's target by id (the probing's own map, read-only: the loops keep no
   *     copy of it)
   */
  void configure(CheckSpec check, Map<String, ProbeTarget> members);

  /** Starts (or restarts) the loop of one backend; its target may have changed. */
  void add(String id, ProbeTarget target);

  /** Stops one backend's loop; a late answer of it is dropped. */
  void remove(String id);

  /** Stops every loop. */
  void close();
}
