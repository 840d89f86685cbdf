package dev.vigil.health;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A deliberately simple model of DESIGN §2 for the differential test: every count, the cap, the
 * expiry and the version are recomputed by scanning every backend, never kept running.
 */
final class ReferencePool {
  static final class Member {
    final String id;
    BackendState state = BackendState.UNKNOWN;
    int passRun;
    int failRun;
    int upstreamErrors;
    int localErrors;
    int multiplier;
    boolean ejected;
    long ejectedUntil;
    boolean draining;

    Member(String id) {
      this.id = id;
    }

    boolean available() {
      return state == BackendState.UP && !ejected && !draining;
    }

    boolean decided() {
      return state != BackendState.UNKNOWN && !draining;
    }

    BackendView view() {
      return new BackendView(
          id,
          state,
          passRun,
          failRun,
          upstreamErrors,
          localErrors,
          multiplier,
          ejected,
          ejectedUntil,
          draining,
          available());
    }
  }

  /** What the pool publishes; the version must move exactly when this changes. */
  record Published(
      boolean panic, Set<String> available, Set<String> ready, Set<String> drainingServing) {}

  final Map<String, Member> members = new LinkedHashMap<>();
  HealthSettings settings;
  boolean panic;
  long refused;
  long wouldEject;
  long ejections;

  ReferencePool(HealthSettings settings) {
    this.settings = settings;
  }

  void add(String id) {
    members.putIfAbsent(id, new Member(id));
    settle();
  }

  void remove(String id) {
    members.remove(id);
    settle();
  }

  void setDraining(String id, boolean value) {
    Member m = members.get(id);
    if (m != null) {
      m.draining = value;
    }
    settle();
  }

  void apply(HealthSettings s) {
    settings = s;
    settle();
  }

  void expire(long now) {
    for (Member m : members.values()) {
      if (m.ejected && m.ejectedUntil <= now) {
        m.ejected = false;
      }
    }
  }

  Transition probe(String id, boolean pass, long now) {
    Member m = members.get(id);
    if (m == null) {
      return Transition.UNCHANGED;
    }
    expire(now);
    Transition t;
    if (pass) {
      m.failRun = 0;
      m.passRun++;
      if (m.ejected && settings.unejectOnActivePass()) {
        m.ejected = false;
        m.ejectedUntil = now;
      }
      if (m.state == BackendState.UP) {
        t = Transition.UNCHANGED;
      } else if (m.state == BackendState.DOWN && m.passRun < settings.rise()) {
        t = Transition.PENDING;
      } else {
        m.state = BackendState.UP;
        t = Transition.CHANGED;
      }
    } else {
      m.passRun = 0;
      m.failRun++;
      if (m.state == BackendState.DOWN) {
        t = Transition.UNCHANGED;
      } else if (m.state == BackendState.UP && m.failRun < settings.fall()) {
        t = Transition.PENDING;
      } else {
        m.state = BackendState.DOWN;
        t = Transition.CHANGED;
      }
    }
    settle();
    return t;
  }

  EjectionDecision outcome(String id, boolean ok, Origin origin, long now) {
    Member m = members.get(id);
    if (m == null) {
      return EjectionDecision.NOT_NEEDED;
    }
    expire(now);
    EjectionDecision d = ok ? success(m) : error(m, origin, now);
    settle();
    return d;
  }

  private static EjectionDecision success(Member m) {
    m.upstreamErrors = 0;
    m.localErrors = 0;
    return EjectionDecision.NOT_NEEDED;
  }

  private EjectionDecision error(Member m, Origin origin, long now) {
    int run;
    int threshold;
    if (origin == Origin.LOCAL && settings.splitLocalOrigin()) {
      run = ++m.localErrors;
      threshold = settings.consecutiveLocalOriginErrors();
    } else {
      run = ++m.upstreamErrors;
      threshold = settings.consecutiveErrors();
    }
    if (threshold == 0 || run < threshold || m.ejected) {
      return EjectionDecision.NOT_NEEDED;
    }
    long base = settings.baseEjectionTimeMs();
    long max = settings.maxEjectionTimeMs();
    int multiplier = base * m.multiplier < max ? m.multiplier + 1 : m.multiplier;
    long until = now + Math.min(base * multiplier, max);
    if (!settings.enforce()) {
      m.upstreamErrors = 0;
      m.localErrors = 0;
      wouldEject++;
      return new EjectionDecision(EjectionDecision.Kind.WOULD_EJECT, until);
    }
    if (!m.draining) {
      long notDraining = 0;
      long out = 0;
      for (Member x : members.values()) {
        notDraining += x.draining ? 0 : 1;
        out += x.ejected && !x.draining ? 1 : 0;
      }
      boolean oneAllowed = settings.alwaysEjectOne() && out == 0;
      if (!oneAllowed && (out + 1) * 100 > settings.maxEjectionPercent() * notDraining) {
        refused++;
        return EjectionDecision.REFUSED_BY_CAP;
      }
    }
    m.ejected = true;
    m.ejectedUntil = until;
    m.multiplier = multiplier;
    m.upstreamErrors = 0;
    m.localErrors = 0;
    ejections++;
    return new EjectionDecision(EjectionDecision.Kind.EJECTED, until);
  }

  int sweep(long now) {
    expire(now);
    int decayed = 0;
    for (Member m : members.values()) {
      if (!m.ejected && m.upstreamErrors == 0 && m.localErrors == 0 && m.multiplier > 0) {
        m.multiplier--;
        decayed++;
      }
    }
    settle();
    return decayed;
  }

  void expireEjections(long now) {
    expire(now);
    settle();
  }

  long nextEjectionEnd() {
    return members.values().stream()
        .filter(m -> m.ejected)
        .mapToLong(m -> m.ejectedUntil)
        .min()
        .orElse(Long.MAX_VALUE);
  }

  void restore(String id, BackendState state, int multiplier, long until, long now) {
    Member m = members.get(id);
    if (m == null) {
      return;
    }
    expire(now);
    m.state = state;
    m.passRun = 0;
    m.failRun = 0;
    m.upstreamErrors = 0;
    m.localErrors = 0;
    m.multiplier = multiplier;
    m.ejectedUntil = until;
    m.ejected = until > now;
    settle();
  }

  void restorePanic(boolean value) {
    panic = value;
    settle();
  }

  /** Re-evaluates panic from scanned counts, with the band. */
  private void settle() {
    long available = 0;
    long decided = 0;
    for (Member m : members.values()) {
      available += m.available() ? 1 : 0;
      decided += m.decided() ? 1 : 0;
    }
    int threshold = settings.panicThresholdPercent();
    if (threshold == 0) {
      panic = false;
    } else if (!panic) {
      panic = available * 100 < threshold * decided;
    } else {
      panic = !(available * 100 >= settings.panicExitPercent() * decided);
    }
  }

  Published published() {
    Set<String> available = new HashSet<>();
    Set<String> ready = new HashSet<>();
    Set<String> drainingServing = new HashSet<>();
    for (Member m : members.values()) {
      if (m.available()) {
        available.add(m.id);
      }
      if (panic ? m.decided() : m.available()) {
        ready.add(m.id);
      }
      if (m.draining && m.state == BackendState.UP && !m.ejected) {
        drainingServing.add(m.id);
      }
    }
    return new Published(panic, available, ready, drainingServing);
  }

  AvailabilitySnapshot.Counts counts() {
    int total = members.size();
    int available = 0;
    int up = 0;
    int down = 0;
    int unknown = 0;
    int ejected = 0;
    int draining = 0;
    int decided = 0;
    for (Member m : members.values()) {
      available += m.available() ? 1 : 0;
      up += m.state == BackendState.UP ? 1 : 0;
      down += m.state == BackendState.DOWN ? 1 : 0;
      unknown += m.state == BackendState.UNKNOWN ? 1 : 0;
      ejected += m.ejected ? 1 : 0;
      draining += m.draining ? 1 : 0;
      decided += m.decided() ? 1 : 0;
    }
    return new AvailabilitySnapshot.Counts(
        total, available, up, down, unknown, ejected, draining, decided);
  }
}
