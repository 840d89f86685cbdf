package dev.vigil.runtime;

import dev.vigil.health.ActiveState;
import dev.vigil.health.Backend;
import dev.vigil.health.BackendHold;
import dev.vigil.health.BackendView;
import java.util.List;
import java.util.Objects;

/**
 * One backend for status and slice writers: the Pod, the decision, and what was last seen.
 * Immutable (every field final), so a view read from any thread is a safe snapshot.
 *
 * <p>One object per backend and view (issue 37, heap per backend): the decision and the last probe
 * are kept as fields, and {@link #decision()} and {@link #lastProbe()} make their records when
 * asked. What most backends never have (error runs, a multiplier, an ejection end, a damping merit,
 * a hold, a dry-run reason, voters' answers) sits in one {@link Marks} object, absent until the
 * backend has any of it; the state and eight flags take two bytes: 56 bytes per backend where the
 * three records took 168.
 */
public final class BackendSnapshot {
  private static final ActiveState[] STATES = ActiveState.values();

  // The eight yes-or-no facts, one bit each in flags.
  private static final int PUBLISHED = 1;
  private static final int HEALTHY = 1 << 1;
  private static final int PROBED = 1 << 2;
  private static final int PROBE_OK = 1 << 3;
  private static final int EJECTED = 1 << 4;
  private static final int DRAINING = 1 << 5;
  private static final int AVAILABLE = 1 << 6;
  private static final int DAMPED = 1 << 7;

  private final Member member;
  private final String probeDetail;
  private final Marks marks; // null: none of them
  private final long since;
  private final long probeAt;
  private final int probeLatencyMs;
  private final int passRun;
  private final int failRun;
  private final byte state; // the ActiveState's ordinal
  private final byte flags;

  /**
   * What a backend has that most never do, all in one place so that the others carry only a null.
   */
  private record Marks(
      int upstreamErrors,
      int localOriginErrors,
      int multiplier,
      long ejectedUntil,
      double merit,
      long meritAt,
      long releaseAt,
      BackendHold hold,
      String wouldEject,
      Confirmer.Votes votes,
      List<BatchKey> ejectedBy) {

    static final Marks NONE =
        new Marks(0, 0, 0, 0, 0, 0, 0, BackendHold.NONE, null, null, List.of());

    /** These marks, or null when there are none (the common case). */
    Marks orNull() {
      return equals(NONE) ? null : this;
    }
  }

  /**
   * @param decision the core's copy of the backend's state; its id is the member's
   * @param published listed as ready in the EndpointSlice (available, or decided in panic)
   * @param healthy the health verdict alone: Up and not ejected
   * @param since when the backend's state last changed (epoch ms)
   * @param lastProbe null until the first probe completes
   * @param wouldEject a dry-run rule would have ejected it (reason), or null
   * @param votes what the voters answered on its last Down verdict out to them (docs/design.md §8),
   *     or null when none ever went out
   * @param ejectedBy the reporters' keyed batches that ejected it within the last two minutes
   *     (docs/passive.md, "Sending a batch again"), oldest first
   */
  public BackendSnapshot(
      Member member,
      BackendView decision,
      boolean published,
      boolean healthy,
      long since,
      ProbeSummary lastProbe,
      String wouldEject,
      Confirmer.Votes votes,
      List<BatchKey> ejectedBy) {
    this(
        member(member, decision),
        decision.state(),
        decision.passRun(),
        decision.failRun(),
        flag(published, PUBLISHED)
            | flag(healthy, HEALTHY)
            | flag(lastProbe != null, PROBED)
            | flag(lastProbe != null && lastProbe.ok(), PROBE_OK)
            | flag(decision.ejected(), EJECTED)
            | flag(decision.draining(), DRAINING)
            | flag(decision.available(), AVAILABLE)
            | flag(decision.damped(), DAMPED),
        new Marks(
                decision.upstreamErrors(),
                decision.localOriginErrors(),
                decision.multiplier(),
                decision.ejectedUntil(),
                decision.merit(),
                decision.meritAt(),
                decision.releaseAt(),
                decision.hold(),
                wouldEject,
                votes,
                List.copyOf(ejectedBy))
            .orNull(),
        since,
        lastProbe == null ? 0 : lastProbe.at(),
        lastProbe == null ? 0 : lastProbe.latencyMs(),
        lastProbe == null ? null : lastProbe.detail());
  }

  /**
   * A tracked member as it is now, read on the pool's context at {@code now}; allocates this object
   * alone.
   */
  BackendSnapshot(TrackedBackend t, boolean published, long now) {
    this(
        t.member,
        t.backend.state(),
        t.backend.passRun(),
        t.backend.failRun(),
        flag(published, PUBLISHED)
            | flag(t.backend.healthy(), HEALTHY)
            | flag(t.probed, PROBED)
            | flag(t.probed && t.probeOk, PROBE_OK)
            | flag(t.backend.ejected(), EJECTED)
            | flag(t.backend.draining(), DRAINING)
            | flag(t.backend.available(), AVAILABLE)
            | flag(t.backend.damped(), DAMPED),
        marks(t, EjectionKeys.shown(t, now)),
        t.since,
        t.probed ? t.probeAt : 0,
        t.probed ? t.probeLatencyMs : 0,
        t.probed ? t.probeDetail : null);
  }

  private BackendSnapshot(
      Member member,
      ActiveState state,
      int passRun,
      int failRun,
      int flags,
      Marks marks,
      long since,
      long probeAt,
      long probeLatencyMs,
      String probeDetail) {
    this.member = member;
    this.state = (byte) state.ordinal();
    this.passRun = passRun;
    this.failRun = failRun;
    this.flags = (byte) flags;
    this.marks = marks;
    this.since = since;
    this.probeAt = probeAt;
    this.probeLatencyMs = latency(probeLatencyMs);
    this.probeDetail = probeDetail;
  }

  private static Member member(Member member, BackendView decision) {
    if (!decision.id().equals(member.id())) {
      throw new IllegalArgumentException(
          "decision of " + decision.id() + " for member " + member.id());
    }
    return member;
  }

  /** The member's marks, or null when it has none; made without a record when it has none. */
  private static Marks marks(TrackedBackend t, List<BatchKey> ejectedBy) {
    Backend b = t.backend;
    boolean none =
        b.upstreamErrors() == 0
            && b.localOriginErrors() == 0
            && b.multiplier() == 0
            && b.ejectedUntil() == 0
            && b.merit() == 0
            && b.meritAt() == 0
            && !b.damped()
            && b.hold().equals(BackendHold.NONE)
            && t.wouldEject() == null
            && t.lastVotes() == null
            && ejectedBy.isEmpty();
    return none
        ? null
        : new Marks(
            b.upstreamErrors(),
            b.localOriginErrors(),
            b.multiplier(),
            b.ejectedUntil(),
            b.merit(),
            b.meritAt(),
            b.damped() ? b.releaseAt() : 0,
            b.hold(),
            t.wouldEject(),
            t.lastVotes(),
            ejectedBy);
  }

  private static int flag(boolean on, int bit) {
    return on ? bit : 0;
  }

  private boolean is(int bit) {
    return (flags & bit) != 0;
  }

  /** A probe's latency in ms fits an int: it ends at its timeout, shorter than its interval. */
  private static int latency(long ms) {
    return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, ms));
  }

  /** Carries marks (tests: a plain backend must not, or the view grows by their bytes). */
  boolean marked() {
    return marks != null;
  }

  private Marks marks() {
    return marks == null ? Marks.NONE : marks;
  }

  public Member member() {
    return member;
  }

  /** The core's state of the backend, as {@link Backend#view()} gave it; made on each call. */
  public BackendView decision() {
    Marks m = marks();
    return new BackendView(
        member.id(),
        STATES[state],
        passRun,
        failRun,
        m.upstreamErrors(),
        m.localOriginErrors(),
        m.multiplier(),
        is(EJECTED),
        m.ejectedUntil(),
        is(DRAINING),
        is(AVAILABLE),
        is(DAMPED),
        m.merit(),
        m.meritAt(),
        m.releaseAt(),
        m.hold());
  }

  /** Available: Up, not ejected, not damped, not held or draining (without making a record). */
  public boolean available() {
    return is(AVAILABLE);
  }

  /** Ejected now (without making a record). */
  public boolean ejected() {
    return is(EJECTED);
  }

  /** When the current (or last) ejection ends (epoch ms); 0 if never ejected. */
  public long ejectedUntil() {
    return marks().ejectedUntil();
  }

  /** What the admin state and the agent make of it; {@link BackendHold#NONE} without a hold. */
  public BackendHold hold() {
    return marks().hold();
  }

  /** Listed as ready in the EndpointSlice (available, or decided in panic). */
  public boolean published() {
    return is(PUBLISHED);
  }

  /** The health verdict alone: Up and not ejected. */
  public boolean healthy() {
    return is(HEALTHY);
  }

  /** When the backend's state last changed (epoch ms). */
  public long since() {
    return since;
  }

  /** The latest active probe; null until the first completes. Made on each call. */
  public ProbeSummary lastProbe() {
    return is(PROBED) ? new ProbeSummary(probeAt, is(PROBE_OK), probeLatencyMs, probeDetail) : null;
  }

  /** A dry-run rule would have ejected it (reason), or null. */
  public String wouldEject() {
    return marks().wouldEject();
  }

  /**
   * What the voters answered on its last Down verdict out to them (docs/design.md §8), or null when
   * none ever went out.
   */
  public Confirmer.Votes votes() {
    return marks().votes();
  }

  /**
   * The reporters' keyed batches that ejected it within the last two minutes (docs/passive.md,
   * "Sending a batch again"), oldest first.
   */
  public List<BatchKey> ejectedBy() {
    return marks().ejectedBy();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BackendSnapshot b
        && member.equals(b.member)
        && decision().equals(b.decision())
        && published() == b.published()
        && healthy() == b.healthy()
        && since == b.since
        && Objects.equals(lastProbe(), b.lastProbe())
        && Objects.equals(wouldEject(), b.wouldEject())
        && Objects.equals(votes(), b.votes())
        && ejectedBy().equals(b.ejectedBy());
  }

  @Override
  public int hashCode() {
    return Objects.hash(member, decision(), published(), healthy(), since, lastProbe());
  }

  @Override
  public String toString() {
    return "BackendSnapshot[member="
        + member
        + ", decision="
        + decision()
        + ", published="
        + published()
        + ", healthy="
        + healthy()
        + ", since="
        + since
        + ", lastProbe="
        + lastProbe()
        + ", wouldEject="
        + wouldEject()
        + ", votes="
        + votes()
        + ", ejectedBy="
        + ejectedBy()
        + "]";
  }
}
