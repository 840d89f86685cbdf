package dev.vigil.runtime;

import dev.vigil.budget.PassiveTrail;
import dev.vigil.budget.ProbeClass;
import dev.vigil.health.AgentState;
import dev.vigil.health.Backend;
import java.util.List;

/**
 * One member of a pool as its runtime tracks it: the Pod, its backend in the decision core, and
 * what status shows besides the decision. Touched only on the pool's context.
 */
final class TrackedBackend {
  Member member;
  Backend backend;

  // The latest active probe, kept as fields (a probe result allocates nothing here); a view copies
  // them. probed: any probe completed yet. A probe's latency ends at its timeout: an int holds it.
  boolean probed;
  boolean probeOk;
  long probeAt;
  int probeLatencyMs;
  String probeDetail;

  /** When the backend's shown state last changed (epoch ms). */
  long since;

  /** In a run of refusals by the cap: further refusals are counted, not reported again. */
  boolean refused;

  /** A held Down verdict was reported (a suspect, lone owner); cleared when it is not held. */
  boolean heldReported;

  /** What the member's agent last said ({@code active.agent}); NONE without an agent. */
  AgentState agent = AgentState.NONE;

  /** The probe class the scheduler was last told (docs/design.md §9). */
  ProbeClass probeClass = ProbeClass.HOT;

  /** Its recent real-request outcomes, for its class; null until the first is reported. */
  PassiveTrail trail;

  /** What few backends ever have; null while it holds nothing (issue 37, heap per backend). */
  private Notes notes;

  /**
   * A dry run's reason and end, the voters' last answers, when they were last asked, the reporters'
   * batches that ejected it lately.
   */
  private static final class Notes {
    String wouldEject;
    long wouldEjectUntil;
    Confirmer.Votes lastVotes;
    long confirmAskedAt = Long.MIN_VALUE;
    List<BatchKey> ejectedBy = List.of();

    boolean empty() {
      return wouldEject == null
          && wouldEjectUntil == 0
          && lastVotes == null
          && confirmAskedAt == Long.MIN_VALUE
          && ejectedBy.isEmpty();
    }
  }

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

  private Notes notes() {
    if (notes == null) {
      notes = new Notes();
    }
    return notes;
  }

  /** Holds notes now (tests: a backend without any must not, or it keeps their bytes). */
  boolean hasNotes() {
    return notes != null;
  }

  /** Drops the notes once they hold nothing again. */
  private void tidy() {
    if (notes != null && notes.empty()) {
      notes = null;
    }
  }

  /** The dry-run reason status shows, or null. */
  String wouldEject() {
    return notes == null ? null : notes.wouldEject;
  }

  /** When the dry-run ejection behind {@link #wouldEject()} would have ended (epoch ms). */
  long wouldEjectUntil() {
    return notes == null ? 0 : notes.wouldEjectUntil;
  }

  /** Sets the dry-run reason and the end of its would-be ejection. */
  void wouldEject(String reason, long until) {
    notes().wouldEject = reason;
    notes.wouldEjectUntil = until;
    tidy();
  }

  /** Clears the dry-run reason (its end goes too: it is read only with a reason). */
  void clearWouldEject() {
    if (notes != null) {
      notes.wouldEject = null;
      notes.wouldEjectUntil = 0;
      tidy();
    }
  }

  /** The voters' answers on its last Down verdict out to them (docs/design.md §8), or null. */
  Confirmer.Votes lastVotes() {
    return notes == null ? null : notes.lastVotes;
  }

  void lastVotes(Confirmer.Votes votes) {
    notes().lastVotes = votes;
    tidy();
  }

  /** When its Down verdict last went to the voters, or {@link Long#MIN_VALUE}. */
  long confirmAskedAt() {
    return notes == null ? Long.MIN_VALUE : notes.confirmAskedAt;
  }

  void confirmAskedAt(long at) {
    notes().confirmAskedAt = at;
    tidy();
  }

  /** The reporters' batches that ejected it lately, oldest first ({@link EjectionKeys}). */
  List<BatchKey> ejectedBy() {
    return notes == null ? List.of() : notes.ejectedBy;
  }

  void ejectedBy(List<BatchKey> keys) {
    if (notes != null || !keys.isEmpty()) {
      notes().ejectedBy = keys;
      tidy();
    }
  }
}
