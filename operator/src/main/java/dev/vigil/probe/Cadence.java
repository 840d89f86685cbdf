package dev.vigil.probe;

import dev.vigil.budget.ProbeClass;
import dev.vigil.budget.ProbeStretch;
import java.util.random.RandomGenerator;

/**
 * When a backend's next probe starts: the planning rules of {@link ProbeScheduler}, apart from its
 * timer, backlog and in-flight bookkeeping. Each method sets {@link #plannedStart} and says whether
 * the backend's place in the start queue must move; the scheduler moves it. A backend of the
 * scheduler is a {@code Cadence} (no object of its own: one more per backend would cost heap).
 *
 * <p>Every gap between two starts is the class's interval stretched by the probe budget, +/-
 * jitter, counted from the last start ({@link ProbeSchedule#gap}). Where an interval grows (a class
 * change, a larger stretch), the next start falls at a random moment between the one the old
 * interval planned and the one the new interval plans ({@link #spread}).
 */
abstract class Cadence extends StartQueue.Entry {
  ProbeSchedule schedule;
  ProbeClass phase = ProbeClass.NORMAL;
  long plannedStart;
  long lastStart = Long.MIN_VALUE;

  Cadence(ProbeSchedule schedule) {
    this.schedule = schedule;
  }

  /** The first start: a random moment within one interval, so first probes spread over it. */
  final void planFirst(long now, RandomGenerator random) {
    plannedStart = now + random.nextLong(schedule.interval().toMillis());
  }

  /**
   * The start after the one that is due now: one gap after the planned one, or after now when the
   * planned one is more than an interval behind (overload, a suspended VM): the cadence restarts.
   */
  final void planAfterDue(long now, ProbeStretch stretch, RandomGenerator random) {
    if (now - plannedStart > schedule.intervalMs(phase, stretch)) {
      plannedStart = now;
    }
    plannedStart += schedule.gap(phase, stretch, random);
  }

  /**
   * A new interval, jitter or timeout: from the last start (a random first start when none yet).
   * Returns whether anything changed.
   */
  final boolean planSchedule(
      ProbeSchedule next, long now, ProbeStretch stretch, RandomGenerator random) {
    boolean changed = !schedule.equals(next);
    schedule = next;
    if (!changed) {
      return false;
    }
    if (lastStart == Long.MIN_VALUE) {
      planFirst(now, random);
    } else {
      plannedStart = lastStart + schedule.gap(phase, stretch, random);
    }
    return true;
  }

  /**
   * A new class: the next start moves to the last start plus the new class's interval (jittered),
   * spread when that interval is longer. Returns whether the start queue must follow: not before a
   * first start (it keeps its random offset) or while the backend is not queued.
   */
  final boolean planClass(ProbeClass next, long now, ProbeStretch stretch, RandomGenerator random) {
    long was = schedule.intervalMs(phase, stretch);
    phase = next;
    if (lastStart == Long.MIN_VALUE || !queued()) {
      return false;
    }
    long latest = lastStart + schedule.gap(phase, stretch, random);
    boolean grew = schedule.intervalMs(phase, stretch) > was * 1.05;
    plannedStart = grew ? spread(now, latest, random) : latest;
    return true;
  }

  /**
   * The budget's stretch changed ({@link #changed}): where this class's stretch fell, a start
   * planned far out under the old one (up to {@code maxInterval}) moves within the new gap, if
   * earlier ({@link #pullForward}), so the freed room is used within one new interval instead of
   * one old one; where it grew, the next start spreads ({@link #spread}). Returns whether the start
   * moved.
   */
  final boolean planStretch(
      ProbeStretch before, ProbeStretch after, long now, RandomGenerator random) {
    if (!queued() || lastStart == Long.MIN_VALUE) {
      return false;
    }
    double was = before.of(phase);
    double is = after.of(phase);
    long latest = lastStart + schedule.gap(phase, after, random);
    long planned;
    if (is < was * 0.95) {
      planned =
          Math.min(
              plannedStart, pullForward(now, latest, schedule.intervalMs(phase, after), random));
    } else if (is > was * 1.05) {
      planned = spread(now, latest, random);
    } else {
      return false;
    }
    boolean moved = planned != plannedStart;
    plannedStart = planned;
    return moved;
  }

  /**
   * Where a smaller stretch brings a far start forward: anywhere, uniformly, between now and the
   * last start plus the new gap ({@code latest}), or within the next new interval when that moment
   * has passed. Brought forward to {@code latest} itself, backends whose phases were close would
   * stay close: the first plan after a start stretches the classes nobody is in yet to {@code
   * maxInterval}, every backend's second start lands far out, and the next plan brings them all
   * back to one moment.
   */
  private long pullForward(long now, long latest, long intervalMs, RandomGenerator random) {
    long to = latest > now ? latest : now + intervalMs;
    return now + (long) (random.nextDouble() * (to - now));
  }

  /** Whether any class's stretch changed by more than a twentieth. */
  static boolean changed(ProbeStretch before, ProbeStretch after) {
    for (ProbeClass c : ProbeClass.values()) {
      if (after.of(c) < before.of(c) * 0.95 || after.of(c) > before.of(c) * 1.05) {
        return true;
      }
    }
    return false;
  }

  /**
   * A start anywhere, uniformly, between the one planned under the shorter interval (or now, if
   * later) and {@code latest}, the one the longer interval plans. Backends whose phases were close
   * (all of them right after a start, their first probes within one unstretched interval; or those
   * that changed class after the same round of results) spread over the longer interval instead of
   * starting in one burst at each of its turns: ten times the budget for a tenth of the time under
   * a tenfold stretch. No gap is shorter than the old interval's or longer than the new one's.
   */
  private long spread(long now, long latest, RandomGenerator random) {
    long from = Math.max(now, plannedStart);
    return latest <= from ? latest : from + (long) (random.nextDouble() * (latest - from));
  }
}
