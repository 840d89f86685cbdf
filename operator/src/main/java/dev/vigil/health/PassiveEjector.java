package dev.vigil.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The passive half of one {@link PoolHealth} (docs/design.md §2.3 to 2.5): error runs, failures
 * within a window, the statistical rules at each sweep, the one ejection path through the cap, the
 * ejection deadlines and the decay of multipliers. Package-private; {@link PoolHealth} brackets
 * every call with its {@link PoolLedger} ({@code begin}/{@code end}) and passes the settings in
 * force.
 *
 * <p>Cost: O(1) per outcome; deadlines in a min-heap (O(log e) for e ejected backends); the decay
 * walks only the backends with a multiplier above 0.
 */
final class PassiveEjector {
  private final PoolLedger ledger;
  private final EjectionDeadlines deadlines = new EjectionDeadlines();
  private long nextEnd = Long.MAX_VALUE; // deadlines.nextDeadline(), cached for the hot path
  private Backend[] decaying = new Backend[16]; // backends with a multiplier above 0
  private int decayingSize;
  private final OutlierDetector outliers = new OutlierDetector();

  private long ejections;
  private long refusedEjections;
  private long wouldEjectCount;

  PassiveEjector(PoolLedger ledger) {
    this.ledger = ledger;
  }

  // ---- outcomes --------------------------------------------------------------------------------

  /** One real-request outcome of b (see {@link PoolHealth#onRequestOutcome}). */
  EjectionDecision onOutcome(
      Backend b, boolean ok, Origin origin, long latencyMs, long now, HealthSettings s) {
    outliers.record(b, ok, origin, latencyMs, s);
    return ok ? success(b) : error(b, origin, now, s);
  }

  private static EjectionDecision success(Backend b) {
    b.upstreamErrors = 0;
    b.localErrors = 0;
    return EjectionDecision.NOT_NEEDED;
  }

  private EjectionDecision error(Backend b, Origin origin, long now, HealthSettings s) {
    int run;
    int threshold;
    if (origin == Origin.LOCAL && s.splitLocalOrigin()) {
      run = b.localErrors = saturatingIncrement(b.localErrors);
      threshold = s.consecutiveLocalOriginErrors();
    } else {
      run = b.upstreamErrors = saturatingIncrement(b.upstreamErrors);
      threshold = s.consecutiveErrors();
      if (s.windowFailures() > 0 && windowTrips(b, now, s)) {
        if (b.ejected) {
          return EjectionDecision.NOT_NEEDED;
        }
        boolean consecutive = threshold != 0 && run >= threshold;
        EjectionDecision d = afterEjection(b, eject(b, s.enforce(), now, s));
        return consecutive ? d : d.byWindow();
      }
    }
    if (threshold == 0 || run < threshold || b.ejected) {
      return EjectionDecision.NOT_NEEDED;
    }
    return afterEjection(b, eject(b, s.enforce(), now, s));
  }

  /** A dry run's would-be ejection resets the runs and the window as an ejection does. */
  private static EjectionDecision afterEjection(Backend b, EjectionDecision d) {
    if (d.kind() == EjectionDecision.Kind.WOULD_EJECT) {
      b.upstreamErrors = 0;
      b.localErrors = 0;
      clearWindow(b);
    }
    return d;
  }

  /**
   * Records an error at {@code now} in b's window; true when the window is full (docs/design.md
   * §2.2).
   */
  private static boolean windowTrips(Backend b, long now, HealthSettings s) {
    FailureWindow w = b.window;
    if (w == null) {
      w = b.window = new FailureWindow(s.windowFailures());
    }
    return w.record(now, s.failureWindowMs());
  }

  static void clearWindow(Backend b) {
    if (b.window != null) {
      b.window.clear();
    }
  }

  /**
   * The one ejection path of every rule: for {@code base x multiplier} (capped), through the cap (a
   * refusal is counted), or, when not enforced, a counted dry run that changes nothing. An ejection
   * resets both error runs and the failure window. The caller checked that b is not ejected.
   */
  private EjectionDecision eject(Backend b, boolean enforce, long now, HealthSettings s) {
    int multiplier = EjectionTime.nextMultiplier(b.multiplier, s);
    long until = EjectionTime.until(now, multiplier, s);
    if (!enforce) {
      wouldEjectCount++;
      return EjectionDecision.wouldEject(until);
    }
    if (!ledger.capAllows(b, s)) {
      refusedEjections++;
      return EjectionDecision.REFUSED_BY_CAP;
    }
    ledger.change(b);
    b.ejected = true;
    b.ejectedUntil = until;
    b.upstreamErrors = 0;
    b.localErrors = 0;
    clearWindow(b);
    setMultiplier(b, multiplier);
    deadlines.add(b);
    nextEnd = deadlines.nextDeadline();
    ledger.tally(b, 1);
    ejections++;
    return EjectionDecision.ejected(until);
  }

  // ---- the sweep -------------------------------------------------------------------------------

  /**
   * Decay, then the statistical rules, then a new interval (see {@link PoolHealth#sweepReport}).
   */
  SweepReport sweep(long now, HealthSettings s) {
    int decayed = 0;
    for (int i = decayingSize - 1; i >= 0; i--) {
      Backend b = decaying[i];
      if (!b.ejected && b.upstreamErrors == 0 && b.localErrors == 0) {
        setMultiplier(b, b.multiplier - 1);
        decayed++;
      }
    }
    List<Ejection> judged = outliers.hasTraffic() ? judge(now, s) : List.of();
    outliers.reset();
    return decayed == 0 && judged.isEmpty()
        ? SweepReport.NOTHING
        : new SweepReport(decayed, judged);
  }

  private List<Ejection> judge(long now, HealthSettings s) {
    List<OutlierDetector.Candidate> flagged = outliers.detect(s);
    if (flagged.isEmpty()) {
      return List.of();
    }
    Set<Backend> judged = new HashSet<>(); // one entry per backend: its first candidate
    List<Ejection> out = new ArrayList<>();
    for (OutlierDetector.Candidate c : flagged) {
      Backend b = c.backend();
      if (b.ejected || !judged.add(b)) {
        continue;
      }
      EjectionDecision d = eject(b, c.enforce(), now, s);
      out.add(new Ejection(b.id, c.rule(), d.kind(), d.ejectedUntil(), c.reason()));
    }
    return out;
  }

  // ---- deadlines and multipliers ---------------------------------------------------------------

  /** Ends every ejection due at {@code now}. */
  void expire(long now) {
    while (now >= nextEnd) {
      Backend b = deadlines.peek();
      ledger.change(b);
      end(b);
      ledger.tally(b, 1);
    }
  }

  /** When the next ejection ends (epoch ms), or {@link Long#MAX_VALUE} when nobody is ejected. */
  long nextEnd() {
    return nextEnd;
  }

  /** Clears the ejected flag and its deadline; callers bracket it with change/tally. */
  void end(Backend b) {
    b.ejected = false;
    deadlines.remove(b);
    nextEnd = deadlines.nextDeadline();
  }

  /** Starts an ejection restored from status, without the cap; callers bracket it. */
  void restore(Backend b, int multiplier, long ejectedUntil, long now) {
    setMultiplier(b, multiplier);
    b.ejectedUntil = ejectedUntil;
    if (ejectedUntil > now) {
      b.ejected = true;
      deadlines.add(b);
      nextEnd = deadlines.nextDeadline();
    }
  }

  /** Forgets a backend leaving the pool: its deadline, its place in the decay, its counters. */
  void forget(Backend b) {
    if (b.heapIndex >= 0) {
      deadlines.remove(b);
      nextEnd = deadlines.nextDeadline();
    }
    if (b.decayIndex >= 0) {
      stopDecay(b);
    }
    outliers.forget(b);
  }

  private void setMultiplier(Backend b, int multiplier) {
    b.multiplier = multiplier;
    if (multiplier > 0 && b.decayIndex < 0) {
      if (decayingSize == decaying.length) {
        decaying = Arrays.copyOf(decaying, decayingSize * 2);
      }
      b.decayIndex = decayingSize;
      decaying[decayingSize++] = b;
    } else if (multiplier == 0 && b.decayIndex >= 0) {
      stopDecay(b);
    }
  }

  private void stopDecay(Backend b) {
    Backend last = decaying[--decayingSize];
    decaying[b.decayIndex] = last;
    last.decayIndex = b.decayIndex;
    decaying[decayingSize] = null;
    b.decayIndex = -1;
  }

  private static int saturatingIncrement(int run) {
    return run == Integer.MAX_VALUE ? run : run + 1;
  }

  // ---- metrics ---------------------------------------------------------------------------------

  long ejections() {
    return ejections;
  }

  long refusedEjections() {
    return refusedEjections;
  }

  long wouldEjectCount() {
    return wouldEjectCount;
  }
}
