package dev.vigil.runtime;

import dev.vigil.health.Ejection;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;

/**
 * An ejection decision with its reason, as Events, logs and status tell it: made by a run of
 * request errors ({@link #of(EjectionDecision, Origin, HealthSettings)}) or by a statistical rule
 * at a sweep ({@link #of(Ejection)}). The reason strings are part of the interface (status, Events,
 * docs and tests quote them): change them only with all of those.
 *
 * @param kind {@code EJECTED}, {@code REFUSED_BY_CAP} or {@code WOULD_EJECT}
 * @param ejectedUntil the end of the ejection (epoch ms) when ejected, the end it would have had in
 *     a dry run, {@code -1} when refused
 * @param reason why, with the numbers: {@code 5 consecutive errors}
 * @param dryRunNote appended to the reason in status for a dry run
 */
record EjectionNotice(
    EjectionDecision.Kind kind, long ejectedUntil, String reason, String dryRunNote) {

  /** A statistical rule's decision at a sweep. */
  static EjectionNotice of(Ejection e) {
    return new EjectionNotice(e.kind(), e.ejectedUntil(), e.reason(), " (dry run)");
  }

  /** The decision a request outcome from {@code origin} caused under {@code settings}. */
  static EjectionNotice of(EjectionDecision d, Origin origin, HealthSettings settings) {
    return new EjectionNotice(
        d.kind(),
        d.ejectedUntil(),
        errorsReason(d.window(), origin, settings),
        " (dry run: passive.enforce is false)");
  }

  /** The reason status shows for a dry run: the backend would have been ejected. */
  String dryRunReason() {
    return reason + dryRunNote;
  }

  private static String errorsReason(boolean window, Origin origin, HealthSettings s) {
    if (window) {
      long ms = s.failureWindowMs();
      return s.windowFailures()
          + " errors within "
          + (ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms")
          + " (passive.windowFailures)";
    }
    return origin == Origin.LOCAL && s.splitLocalOrigin()
        ? s.consecutiveLocalOriginErrors() + " consecutive local-origin errors"
        : s.consecutiveErrors() + " consecutive errors";
  }
}
