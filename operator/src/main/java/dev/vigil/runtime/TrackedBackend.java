package dev.vigil.runtime;

import dev.vigil.budget.PassiveTrail;
import dev.vigil.budget.ProbeClass;
import dev.vigil.health.AgentState;
import dev.vigil.health.Backend;

/**
 * One member of a pool as its runtime tracks it: the Pod, its backend in the decision core, and
 * what status shows besides the decision. Touched only on the pool's context.
 */
final class TrackedBackend {
  Member member;
  Backend backend;

  // The latest active probe, kept as fields (a probe result allocates nothing here); a view copies
  // them. probed: any probe completed yet.
  boolean probed;
  boolean probeOk;
  long probeAt;
  long probeLatencyMs;
  String probeDetail;

  /** When the backend's shown state last changed (epoch ms). */
  long since;

  /** The dry-run reason status shows, or null. */
  String wouldEject;

  /** When the dry-run ejection behind {@link #wouldEject} would have ended (epoch ms). */
  long wouldEjectUntil;

  /** In a run of refusals by the cap: further refusals are counted, not reported again. */
  boolean refused;

  /** The voters' answers on its last Down verdict out to them (docs/design.md §8), or null. */
  Confirmer.Votes lastVotes;

  /** A held Down verdict was reported (a suspect, lone owner); cleared when it is not held. */
  boolean heldReported;

  /** What the member's agent last said ({@code active.agent}); NONE without an agent. */
  AgentState agent = AgentState.NONE;

  /** The probe class the scheduler was last told (docs/design.md §9). */
  ProbeClass probeClass = ProbeClass.HOT;

  /** Its recent real-request outcomes, for its class; null until the first is reported. */
  PassiveTrail trail;

  /** When its Down verdict last went to the voters, or {@link Long#MIN_VALUE}. */
  long confirmAskedAt = Long.MIN_VALUE;

  TrackedBackend(Member member, Backend backend, long since) {
    this.member = member;
    this.backend = backend;
    this.since = since;
  }

  String id() {
    return member.id();
  }

  /** Its last probe failed. */
  boolean failing() {
    return probed && !probeOk;
  }
}
