package dev.vigil.runtime;

import dev.vigil.budget.ClassCounts;
import dev.vigil.budget.PassiveTrail;
import dev.vigil.budget.ProbeClass;
import dev.vigil.health.ActiveState;
import dev.vigil.health.AgentState;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.BackendHold;
import dev.vigil.health.PoolHealth;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Probing;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A pool's members as its runtime tracks them, by id and by address: keeps them in step with the
 * Pods (new members join the core and the probes, gone or moved ones leave, draining follows the
 * Pod), and lists them for the view. Runs on the pool's context.
 */
final class TrackedBackends {
  private final PoolHealth health;
  private final Probing probing;
  private final EjectionBook ejections;
  private final EjectionKeys keys;
  private final MembersById byId = new MembersById();

  /**
   * The members by Pod IP, for real-request outcomes (reported by address): made on the first
   * lookup and kept in step from then on, so a pool nobody reports outcomes for has none.
   */
  private Map<String, TrackedBackend> byIp;

  /** Members whose last probe failed; kept in step on each result and on removal. */
  private int failing;

  /** {@link #failing} over the member count, published for other threads on each change. */
  private volatile FailingBackends counts = FailingBackends.NONE;

  /** Members per probe class, kept in step on each class change (docs/design.md §9). */
  private final int[] perClass = new int[ProbeClass.values().length];

  /** {@link #perClass}, published for the probe budget's plan on each change. */
  private volatile ClassCounts classes = ClassCounts.NONE;

  /** The empty trail of a member nobody reports on. */
  private static final PassiveTrail NO_TRAIL = new PassiveTrail();

  TrackedBackends(PoolHealth health, Probing probing, EjectionBook ejections, EjectionKeys keys) {
    this.health = health;
    this.probing = probing;
    this.ejections = ejections;
    this.keys = keys;
  }

  TrackedBackend byId(String id) {
    return byId.get(id);
  }

  TrackedBackend byIp(String ip) {
    if (byIp == null) {
      byIp = new HashMap<>();
      byId.inOrder().forEach(t -> byIp.put(t.member.ip(), t));
    }
    return byIp.get(ip);
  }

  /** The counts for the failing share; from any thread. */
  FailingBackends failing() {
    return counts;
  }

  /** Records a member's latest probe, keeping the failing count in step. */
  void probed(TrackedBackend t, long at, boolean ok, long latencyMs, String detail) {
    boolean failedBefore = t.failing();
    t.probed = true;
    t.probeOk = ok;
    t.probeAt = at;
    t.probeLatencyMs = (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, latencyMs));
    t.probeDetail = detail;
    if (failedBefore != !ok) {
      failing += ok ? -1 : 1;
      publishCounts();
    }
  }

  private void publishCounts() {
    counts = new FailingBackends(failing, byId.size());
  }

  /** Members per probe class; from any thread. */
  ClassCounts classes() {
    return classes;
  }

  /** The member's probe class now. */
  private ProbeClass classOf(TrackedBackend t, long now) {
    return ProbeClass.of(
        t.backend.phase(),
        t.backend.state(),
        t.backend.ejected(),
        t.trail == null ? NO_TRAIL : t.trail,
        t.confirmAskedAt(),
        health.settings().intervalMs(),
        health.settings().quietMinRequests(),
        now);
  }

  /**
   * Works out the member's class again (after a probe result or outcome); the new class when it
   * changed since the scheduler last heard it, else null.
   */
  ProbeClass reclass(TrackedBackend t, long now) {
    ProbeClass c = classOf(t, now);
    if (c == t.probeClass) {
      return null;
    }
    count(t.probeClass, -1);
    t.probeClass = c;
    count(c, 1);
    return c;
  }

  private void count(ProbeClass c, int delta) {
    perClass[c.ordinal()] += delta;
    classes =
        new ClassCounts(
            perClass[ProbeClass.HOT.ordinal()],
            perClass[ProbeClass.DOWN.ordinal()],
            perClass[ProbeClass.QUIET.ordinal()],
            perClass[ProbeClass.NORMAL.ordinal()]);
  }

  /**
   * Records a real-request outcome of the member for its class, and tells the scheduler when the
   * class changed (a passive failure makes it hot at once).
   */
  void passive(TrackedBackend t, boolean ok, long now) {
    if (t.trail == null) {
      t.trail = new PassiveTrail();
    }
    t.trail.record(ok, now, health.settings().quietMinRequests());
    ProbeClass c = reclass(t, now);
    if (c != null) {
      probing.classify(t.id(), c);
    }
  }

  /** Every member, in id order; read-only, valid until the members next change. */
  Collection<TrackedBackend> all() {
    return byId.inOrder();
  }

  /**
   * Brings the members in step with {@code members}; true when any joined, left or changed.
   *
   * @param restored state a previous operator left, by member id; used only for new members
   */
  boolean update(List<Member> members, Map<String, RestoredBackend> restored, long now) {
    Map<String, Member> wanted = new HashMap<>();
    for (Member m : members) {
      wanted.put(m.id(), m);
    }
    int before = byId.size();
    byId.removeIf(
        t -> {
          Member m = wanted.get(t.id());
          boolean leaves =
              m == null || !m.ip().equals(t.member.ip()) || m.probePort() != t.member.probePort();
          if (leaves) {
            remove(t);
          }
          return leaves;
        });
    boolean changed = byId.size() != before;
    for (Member m : members) {
      TrackedBackend t = byId.get(m.id());
      if (t == null) {
        // a target's endpoint has no targetRef: RestoreFromStatus keys it by its address
        add(m, restored.getOrDefault(m.id(), m.pod() ? null : restored.get(m.ip())), now);
        changed = true;
      } else if (!m.equals(t.member)) {
        if (m.draining() != t.member.draining()) {
          health.setDraining(t.backend, m.draining());
          t.since = now;
        }
        t.member = m;
        if (hold(t)) {
          t.since = now;
        }
        changed = true;
      }
    }
    byId.merge();
    if (changed) {
      publishCounts();
    }
    return changed;
  }

  private void add(Member m, RestoredBackend restored, long now) {
    TrackedBackend t = new TrackedBackend(m, health.addNew(m.id()), now);
    if (restored != null && restored.state() != ActiveState.UNKNOWN) {
      health.restore(
          t.backend,
          restored.state(),
          restored.ejections(),
          restored.ejectedUntil(),
          restored.damping(),
          now);
      if (restored.since() > 0 && restored.since() <= now) {
        t.since = restored.since();
      }
    }
    if (restored != null) {
      t.lastVotes(restored.votes());
      keys.restored(t, restored.ejectedBy(), now);
    }
    if (m.draining()) {
      health.setDraining(t.backend, true);
    }
    hold(t);
    byId.stage(t);
    if (byIp != null) {
      byIp.put(m.ip(), t);
    }
    t.probeClass = classOf(t, now);
    count(t.probeClass, 1);
    probing.add(m.id(), new ProbeTarget(m.ip(), m.probePort()), t.probeClass);
    publishCounts();
  }

  private void remove(TrackedBackend t) {
    ejections.forget(t);
    keys.left(t);
    probing.remove(t.id());
    health.remove(t.backend);
    if (byIp != null) {
      byIp.remove(t.member.ip(), t);
    }
    if (t.failing()) {
      failing--;
    }
    count(t.probeClass, -1);
  }

  /**
   * Takes the agent's latest answer for a member (docs/decision.md): true when its hold changed.
   */
  boolean agent(TrackedBackend t, AgentState agent) {
    t.agent = agent;
    return hold(t);
  }

  /**
   * Every member's agent state back to NONE (the check has no agent any more); true if any held.
   */
  boolean forgetAgents() {
    boolean changed = false;
    for (TrackedBackend t : byId.inOrder()) {
      if (t.agent != AgentState.NONE) {
        changed |= agent(t, AgentState.NONE);
      }
    }
    return changed;
  }

  /** Applies the member's admin state and agent answer to the core; true when the hold changed. */
  private boolean hold(TrackedBackend t) {
    BackendHold before = t.backend.hold();
    health.setHold(t.backend, BackendHold.of(t.member.admin(), t.agent));
    return !before.equals(t.backend.hold());
  }

  /** The members for a view of the core's {@code snap} at {@code now}, by id. */
  List<BackendSnapshot> snapshots(AvailabilitySnapshot snap, long now) {
    List<BackendSnapshot> backends = new ArrayList<>(byId.size());
    for (TrackedBackend t : byId.inOrder()) {
      backends.add(new BackendSnapshot(t, snap.ready().contains(t.id()), now));
    }
    return List.copyOf(backends);
  }
}
