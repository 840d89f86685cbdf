package dev.vigil.runtime;

import dev.vigil.health.ActiveState;
import dev.vigil.health.Backend;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import dev.vigil.probe.ProbeResult;
import java.util.Locale;

/**
 * Why a backend's state changed, in the words Events, logs and status use (ejections: {@link
 * EjectionNotice}). The strings are part of the interface (docs and tests quote them): change them
 * only with all of those.
 */
final class TransitionReasons {
  /** A passing probe ended an ejection early. */
  static final String UNEJECTED_BY_PROBE = "active probe passed (passive.unejectOnActivePass)";

  /** An ejection ran its time. */
  static final String EJECTION_ENDED = "ejection time ended";

  private TransitionReasons() {}

  /** Why a probe result changed the backend's state to {@code after}. */
  static String probe(Backend b, ProbeResult result, ActiveState after, HealthSettings s) {
    if (after == ActiveState.UP) {
      return (b.passRun() <= 1 ? "first probe passed" : s.rise() + " probes passed");
    }
    if (result.failFast() && b.failRun() < s.fall()) {
      return "fail-fast status (active.http.failFastStatuses): " + result.detail();
    }
    return (b.failRun() <= 1 ? "first probe failed: " : s.fall() + " probes failed: ")
        + result.detail();
  }

  /** Why flap damping held the backend back. */
  static String damped(Backend b, HealthSettings s) {
    DampingSettings d = s.damping();
    return String.format(
        Locale.ROOT,
        "flapping: merit %.0f above damping.suppressThreshold %d",
        b.merit(),
        d == null ? 0 : d.suppressThreshold());
  }

  /** Why flap damping released a backend. */
  static String released(HealthSettings s) {
    return s.damps() ? "merit decayed to damping.reuseThreshold" : "damping turned off";
  }
}
