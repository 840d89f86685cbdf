package dev.vigil.demo;

import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.ProbeSummary;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Probes of backends the demo keeps healthy that timed out: the demo's backends answer at once, so
 * such a timeout measures the machine (a busy CPU delays the prober's event loop past a timeout
 * that {@code --speed} made short), not Vigil. Counted from what the observer sees, each probe
 * once; when a run fails with any, the demo says to lower {@code --speed}.
 */
final class HealthyTimeouts {
  private final Predicate<String> healthy;
  private final Set<String> seen = new HashSet<>();

  /**
   * @param healthy whether the demo keeps the backend of this Pod healthy right now
   */
  HealthyTimeouts(Predicate<String> healthy) {
    this.healthy = healthy;
  }

  synchronized void observe(Observation o) {
    if (o.view() == null) {
      return;
    }
    for (BackendSnapshot b : o.view().backends()) {
      ProbeSummary p = b.lastProbe();
      if (p != null
          && !p.ok()
          && p.detail() != null
          && p.detail().contains("timeout")
          && healthy.test(b.member().id())) {
        seen.add(b.member().id() + "@" + p.at());
      }
    }
  }

  synchronized int count() {
    return seen.size();
  }

  /** What to do when the run failed, or null when no healthy backend timed out. */
  synchronized String advice(double speed, long timeoutMs) {
    if (seen.isEmpty()) {
      return null;
    }
    double lower = speed > 2 ? Math.floor(speed / 2) : Math.max(0.1, speed / 2);
    return String.format(
        Locale.ROOT,
        "%d probes of backends that were healthy timed out (timeout %s at --speed %s): the"
            + " machine was too busy for this speed, so the run measured the machine rather than"
            + " Vigil. Run again with a lower --speed (e.g. --speed %s), or on a quieter machine.",
        seen.size(),
        Timeline.millis(timeoutMs),
        number(speed),
        number(lower));
  }

  private static String number(double s) {
    return s == Math.rint(s) ? Long.toString((long) s) : String.format(Locale.ROOT, "%.1f", s);
  }
}
