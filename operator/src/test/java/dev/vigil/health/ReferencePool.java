package dev.vigil.health;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A deliberately simple model of docs/design.md §2 for the differential test: every count, the cap,
 * the expiry and the version are recomputed by scanning every backend, never kept running; the
 * statistical rules scan every member and sort for the median. Flap damping (§2.1) keeps no release
 * times: a damped member is released when a scan finds its decayed merit at or below the reuse
 * threshold, and the next release is found by binary search over the decay formula. Failures within
 * a window (§2.2) keep every counted failure since the last emptying and count those inside the
 * window by a scan; fail-fast probes are a flag on the probe event.
 */
final class ReferencePool {
  static final class Member {
    final String id;
    ActiveState state = ActiveState.UNKNOWN;
    int passRun;
    int failRun;
    int upstreamErrors;
    int localErrors;
    int multiplier;
    boolean ejected;
    long ejectedUntil;
    boolean draining;
    final long order;
    long requests;
    long successes;
    long latencySum;
    long latencySamples;
    long latencyMax;
    double merit;
    long meritAt;
    boolean damped;
    // Checker quorum (docs/design.md §8): the owner's Down verdict is out to the voters.
    boolean confirming;
    // Failures within a window (docs/design.md §2.2): every counted failure since the window was
    // emptied.
    final List<Long> failures = new ArrayList<>();

    Member(String id, long order) {
      this.id = id;
      this.order = order;
    }

    boolean available() {
      return state == ActiveState.UP && !ejected && !damped && !draining;
    }

    ProbePhase phase() {
      if (state == ActiveState.UP && failRun > 0) {
        return ProbePhase.FAST;
      }
      if (state == ActiveState.DOWN) {
        return passRun > 0 ? ProbePhase.FAST : ProbePhase.DOWN;
      }
      return ProbePhase.NORMAL;
    }

    boolean decided() {
      return state != ActiveState.UNKNOWN && !draining;
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
          available(),
          damped,
          merit,
          meritAt,
          damped ? releaseAt(this, owner.settings.damping()) : 0,
          BackendHold.NONE);
    }

    ReferencePool owner;
  }

  /** What the pool publishes; the version must move exactly when this changes. */
  record Published(
      boolean panic, Set<String> available, Set<String> ready, Set<String> drainingServing) {}

  final Map<String, Member> members = new LinkedHashMap<>();
  HealthSettings settings;
  Confirmation confirmation = Confirmation.ALONE;
  boolean panic;
  long refused;
  long wouldEject;
  long ejections;
  long dampings;
  long releases;

  /** Damping events since the last {@link #takeEvents()}: "damped id@release", "released id". */
  final List<String> events = new ArrayList<>();

  private long added;

  ReferencePool(HealthSettings settings) {
    this.settings = settings;
  }

  void add(String id) {
    if (!members.containsKey(id)) {
      Member m = new Member(id, added++);
      m.owner = this;
      members.put(id, m);
    }
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
    if (s.windowFailures() != settings.windowFailures()) {
      members.values().forEach(m -> m.failures.clear());
    }
    settings = s;
    if (s.damping() == null) {
      for (Member m : members.values()) {
        if (m.damped) {
          release(m);
        }
      }
    }
    settle();
  }

  void expire(long now) {
    for (Member m : members.values()) {
      if (m.ejected && m.ejectedUntil <= now) {
        m.ejected = false;
      }
    }
    DampingSettings d = settings.damping();
    for (Member m : members.values()) {
      if (m.damped && decay(d, m.merit, m.meritAt, now) <= d.reuseThreshold()) {
        release(m);
      }
    }
  }

  private void release(Member m) {
    m.damped = false;
    releases++;
    events.add("released " + m.id);
  }

  /**
   * A transition Up to Down or Down to Up: decay, penalty, cap, maybe damp (docs/design.md §2.1).
   */
  private void flap(Member m, long now) {
    DampingSettings d = settings.damping();
    if (d == null) {
      return;
    }
    double decayed = decay(d, m.merit, m.meritAt, now);
    m.merit = Math.min(decayed + d.penalty(), ceiling(d));
    m.meritAt = now;
    if (!m.damped && m.merit > d.suppressThreshold()) {
      m.damped = true;
      dampings++;
      events.add("damped " + m.id + "@" + releaseAt(m, d));
    }
  }

  /**
   * A merit {@code m} set at {@code t0}, decayed to {@code t}: {@code m x 2^(-(t - t0) / halfLife)}
   * (docs/design.md §2.1). Written out here, not taken from {@code DampingSettings}, so that a
   * wrong decay in production disagrees with this reference.
   */
  static double decay(DampingSettings d, double m, long t0, long t) {
    return m * Math.pow(2, -(double) (t - t0) / d.halfLifeMs());
  }

  /**
   * The merit's cap: {@code reuseThreshold x 2^(maxSuppressTime / halfLife)} (docs/design.md §2.1).
   */
  static double ceiling(DampingSettings d) {
    return d.reuseThreshold() * Math.pow(2, (double) d.maxSuppressTimeMs() / d.halfLifeMs());
  }

  /** The first ms at or after the merit's time at which it has decayed to reuse: binary search. */
  static long releaseAt(Member m, DampingSettings d) {
    long lo = m.meritAt;
    long hi = m.meritAt + d.halfLifeMs() * 1_100;
    while (lo < hi) {
      long mid = lo + (hi - lo) / 2;
      if (decay(d, m.merit, m.meritAt, mid) <= d.reuseThreshold()) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  long nextRelease() {
    return members.values().stream()
        .filter(m -> m.damped)
        .mapToLong(m -> releaseAt(m, settings.damping()))
        .min()
        .orElse(Long.MAX_VALUE);
  }

  List<String> takeEvents() {
    List<String> out = new ArrayList<>(events);
    events.clear();
    return out;
  }

  Transition probe(String id, boolean pass, long now) {
    return probe(id, pass, false, now);
  }

  Transition probe(String id, boolean pass, boolean failFast, long now) {
    Member m = members.get(id);
    if (m == null) {
      return Transition.UNCHANGED;
    }
    expire(now);
    Transition t;
    if (pass) {
      m.failRun = 0;
      m.confirming = false;
      m.passRun++;
      if (m.ejected && settings.unejectOnActivePass()) {
        m.ejected = false;
        m.ejectedUntil = now;
      }
      if (m.state == ActiveState.UP) {
        t = Transition.UNCHANGED;
      } else if (m.state == ActiveState.DOWN && m.passRun < settings.rise()) {
        t = Transition.PENDING;
      } else {
        if (m.state == ActiveState.DOWN) {
          flap(m, now);
        }
        m.state = ActiveState.UP;
        t = Transition.CHANGED;
      }
    } else {
      m.passRun = 0;
      m.failRun++;
      if (m.state == ActiveState.DOWN) {
        t = Transition.UNCHANGED;
      } else if (m.state == ActiveState.UP && m.failRun < settings.fall() && !failFast) {
        t = Transition.PENDING;
      } else if (m.state == ActiveState.UP && confirmation.mode() == Confirmation.Mode.FREEZE) {
        t = Transition.HELD;
      } else if (m.state == ActiveState.UP && confirmation.mode() == Confirmation.Mode.VOTE) {
        t = m.confirming ? Transition.PENDING : Transition.CONFIRM;
        m.confirming = true;
      } else {
        m.confirming = false;
        if (m.state == ActiveState.UP) {
          flap(m, now);
        }
        m.state = ActiveState.DOWN;
        t = Transition.CHANGED;
      }
    }
    settle();
    return t;
  }

  /** docs/design.md §8 rule 2, counted out in full. */
  Transition votes(String id, int down, int up, long now) {
    Member m = members.get(id);
    if (m == null) {
      return Transition.UNCHANGED;
    }
    expire(now);
    Transition t = Transition.UNCHANGED;
    if (m.confirming && m.state == ActiveState.UP) {
      m.confirming = false;
      int downVotes = 1 + down;
      int deciding = 1 + down + up;
      if (downVotes * 100 > confirmation.downPercent() * deciding) {
        flap(m, now);
        m.state = ActiveState.DOWN;
        t = Transition.CHANGED;
      } else {
        m.failRun = 0;
      }
    }
    settle();
    return t;
  }

  EjectionDecision outcome(String id, boolean ok, Origin origin, long latencyMs, long now) {
    Member m = members.get(id);
    if (m == null) {
      return EjectionDecision.NOT_NEEDED;
    }
    expire(now);
    boolean proxysOwn = !ok && origin == Origin.LOCAL && settings.splitLocalOrigin();
    if (settings.detectsOutliers() && !proxysOwn) {
      m.requests++;
      m.successes += ok ? 1 : 0;
      if (latencyMs >= 0) {
        long ms = Math.min(latencyMs, Integer.MAX_VALUE);
        m.latencySum += ms;
        m.latencySamples++;
        m.latencyMax = Math.max(m.latencyMax, ms);
      }
    }
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
      if (settings.windowFailures() > 0) {
        m.failures.add(now);
        long window = settings.failureWindowMs();
        long within = m.failures.stream().filter(t -> t > now - window).count();
        if (within >= settings.windowFailures()) {
          if (m.ejected) {
            return EjectionDecision.NOT_NEEDED;
          }
          boolean consecutive = threshold != 0 && run >= threshold;
          EjectionDecision d = afterEjection(m, eject(m, settings.enforce(), now));
          return consecutive ? d : new EjectionDecision(d.kind(), d.ejectedUntil(), true);
        }
      }
    }
    if (threshold == 0 || run < threshold || m.ejected) {
      return EjectionDecision.NOT_NEEDED;
    }
    return afterEjection(m, eject(m, settings.enforce(), now));
  }

  private static EjectionDecision afterEjection(Member m, EjectionDecision d) {
    if (d.kind() == EjectionDecision.Kind.WOULD_EJECT) {
      m.upstreamErrors = 0;
      m.localErrors = 0;
      m.failures.clear();
    }
    return d;
  }

  private EjectionDecision eject(Member m, boolean enforce, long now) {
    long base = settings.baseEjectionTimeMs();
    long max = settings.maxEjectionTimeMs();
    int multiplier = base * m.multiplier < max ? m.multiplier + 1 : m.multiplier;
    long until = now + Math.min(base * multiplier, max);
    if (!enforce) {
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
    m.failures.clear();
    ejections++;
    return new EjectionDecision(EjectionDecision.Kind.EJECTED, until);
  }

  SweepReport sweep(long now) {
    expire(now);
    int decayed = 0;
    for (Member m : members.values()) {
      if (!m.ejected && m.upstreamErrors == 0 && m.localErrors == 0 && m.multiplier > 0) {
        m.multiplier--;
        decayed++;
      }
    }
    List<Ejection> out = new ArrayList<>();
    for (Flag f : flags()) {
      if (f.m.ejected || out.stream().anyMatch(e -> e.backendId().equals(f.m.id))) {
        continue;
      }
      EjectionDecision d = eject(f.m, f.enforce, now);
      out.add(new Ejection(f.m.id, f.rule, d.kind(), d.ejectedUntil(), f.reason));
    }
    for (Member m : members.values()) {
      m.requests = 0;
      m.successes = 0;
      m.latencySum = 0;
      m.latencySamples = 0;
      m.latencyMax = 0;
    }
    settle();
    return new SweepReport(decayed, out);
  }

  private record Flag(
      Member m, Ejection.Rule rule, boolean enforce, double severity, String reason) {}

  /** Every backend a rule flags, in the order to try them. */
  private List<Flag> flags() {
    List<Flag> flags = new ArrayList<>();
    HealthSettings.FailurePercentage fp = settings.failurePercentage();
    if (fp != null) {
      List<Member> q =
          members.values().stream().filter(m -> m.requests >= fp.requestVolume()).toList();
      if (q.size() >= fp.minimumHosts()) {
        for (Member m : q) {
          long failures = m.requests - m.successes;
          if (!m.ejected && failures > 0 && 100 * failures >= fp.threshold() * m.requests) {
            double percent = 100.0 * failures / m.requests;
            String reason =
                "failure percentage "
                    + pct(percent)
                    + " >= threshold "
                    + fp.threshold()
                    + "% ("
                    + failures
                    + " of "
                    + m.requests
                    + " requests failed)";
            flags.add(
                new Flag(
                    m,
                    Ejection.Rule.FAILURE_PERCENTAGE,
                    settings.enforces(fp.enforce()),
                    percent,
                    reason));
          }
        }
      }
    }
    HealthSettings.SuccessRate sr = settings.successRate();
    if (sr != null) {
      List<Member> q =
          members.values().stream().filter(m -> m.requests >= sr.requestVolume()).toList();
      if (q.size() >= sr.minimumHosts()) {
        double sum = 0;
        for (Member m : q) {
          sum += rate(m);
        }
        double mean = sum / q.size();
        double squares = 0;
        for (Member m : q) {
          squares += (rate(m) - mean) * (rate(m) - mean);
        }
        double stdev = Math.sqrt(squares / q.size());
        double threshold = mean - sr.stdevFactor() * stdev;
        for (Member m : q) {
          if (!m.ejected && rate(m) < threshold - 1e-9) {
            String reason =
                "success rate "
                    + pct(rate(m))
                    + " < mean "
                    + pct(mean)
                    + " - "
                    + num(sr.stdevFactor())
                    + " x stdev "
                    + pct(stdev)
                    + " (threshold "
                    + pct(threshold)
                    + ", "
                    + m.requests
                    + " requests, "
                    + q.size()
                    + " backends)";
            flags.add(
                new Flag(
                    m,
                    Ejection.Rule.SUCCESS_RATE,
                    settings.enforces(sr.enforce()),
                    100 - rate(m),
                    reason));
          }
        }
      }
    }
    HealthSettings.Latency lat = settings.latency();
    if (lat != null) {
      List<Member> q =
          members.values().stream()
              .filter(m -> m.latencySamples >= Math.max(2, lat.minimumSamples()))
              .toList();
      if (q.size() >= lat.minimumHosts()) {
        double[] means = q.stream().mapToDouble(ReferencePool::meanLatency).sorted().toArray();
        int n = means.length;
        double median =
            n % 2 == 1 ? means[n / 2] : means[n / 2 - 1] + (means[n / 2] - means[n / 2 - 1]) / 2;
        for (Member m : q) {
          double mean = meanLatency(m);
          if (!m.ejected && mean > lat.factor() * median && mean > lat.floorMs()) {
            String reason =
                "mean latency "
                    + num(mean)
                    + "ms > "
                    + num(lat.factor())
                    + " x median "
                    + num(median)
                    + "ms and > floor "
                    + lat.floorMs()
                    + "ms ("
                    + m.latencySamples
                    + " samples, slowest left out, "
                    + q.size()
                    + " backends)";
            flags.add(
                new Flag(m, Ejection.Rule.LATENCY, settings.enforces(lat.enforce()), mean, reason));
          }
        }
      }
    }
    flags.sort(
        Comparator.comparing((Flag f) -> !f.enforce)
            .thenComparing(f -> f.rule)
            .thenComparing(Comparator.comparingDouble((Flag f) -> f.severity).reversed())
            .thenComparingLong(f -> f.m.order));
    return flags;
  }

  /** As docs/decision.md prints numbers: at most one decimal, none when it would be .0. */
  private static String num(double v) {
    String s = String.format(java.util.Locale.ROOT, "%.1f", v);
    return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s;
  }

  private static String pct(double v) {
    return num(v) + "%";
  }

  private static double rate(Member m) {
    return 100.0 * m.successes / m.requests;
  }

  private static double meanLatency(Member m) {
    return (double) (m.latencySum - m.latencyMax) / (m.latencySamples - 1);
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

  void restore(
      String id, ActiveState state, int multiplier, long until, DampingState ds, long now) {
    Member m = members.get(id);
    if (m == null) {
      return;
    }
    expire(now);
    m.state = state;
    m.passRun = 0;
    m.failRun = 0;
    m.confirming = false;
    m.upstreamErrors = 0;
    m.localErrors = 0;
    m.failures.clear();
    m.multiplier = multiplier;
    m.ejectedUntil = until;
    m.ejected = until > now;
    DampingSettings d = settings.damping();
    m.merit = ds.merit();
    m.meritAt = ds.meritAt();
    m.damped =
        ds.damped() && d != null && decay(d, ds.merit(), ds.meritAt(), now) > d.reuseThreshold();
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
      if (m.draining && m.state == ActiveState.UP && !m.ejected && !m.damped) {
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
    int damped = 0;
    for (Member m : members.values()) {
      damped += m.damped ? 1 : 0;
      available += m.available() ? 1 : 0;
      up += m.state == ActiveState.UP ? 1 : 0;
      down += m.state == ActiveState.DOWN ? 1 : 0;
      unknown += m.state == ActiveState.UNKNOWN ? 1 : 0;
      ejected += m.ejected ? 1 : 0;
      draining += m.draining ? 1 : 0;
      decided += m.decided() ? 1 : 0;
    }
    return new AvailabilitySnapshot.Counts(
        total, available, up, down, unknown, ejected, draining, decided, damped);
  }
}
