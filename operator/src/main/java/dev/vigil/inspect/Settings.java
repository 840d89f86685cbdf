package dev.vigil.inspect;

import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.HealthPolicySpec;
import dev.vigil.health.Confirmation;

/**
 * The few policy settings {@code vigil why} quotes, with the CRD's defaults where the policy leaves
 * them out (a policy read from the API server is defaulted already; a missing one is not).
 */
record Settings(
    String protocol,
    String interval,
    int rise,
    int fall,
    int panicThreshold,
    int panicExitPercent,
    boolean unejectOnActivePass,
    int downPercent) {

  static Settings of(HealthPolicy policy) {
    HealthPolicySpec spec = policy == null ? null : policy.getSpec();
    var active = spec == null ? null : spec.getActive();
    var passive = spec == null ? null : spec.getPassive();
    int threshold = or(spec == null ? null : spec.getPanicThresholdPercent(), 50);
    return new Settings(
        active == null || active.getProtocol() == null ? "HTTP" : active.getProtocol().name(),
        active == null || active.getInterval() == null ? "5s" : active.getInterval(),
        or(active == null ? null : active.getRise(), 2),
        or(active == null ? null : active.getFall(), 3),
        threshold,
        or(spec == null ? null : spec.getPanicExitPercent(), threshold),
        passive != null && Boolean.TRUE.equals(passive.getUnejectOnActivePass()),
        or(
            spec == null || spec.getQuorum() == null ? null : spec.getQuorum().getDownPercent(),
            Confirmation.DEFAULT_DOWN_PERCENT));
  }

  String describe() {
    return protocol + " every " + interval + ", rise " + rise + ", fall " + fall;
  }

  String every() {
    return " (one every " + interval + ")";
  }

  String panicNote() {
    return panicThreshold == 0 ? " (panic disabled)" : " (threshold " + panicThreshold + "%)";
  }

  String panicExit() {
    return panicExitPercent + "%";
  }

  private static int or(Integer value, int otherwise) {
    return value == null ? otherwise : value;
  }
}
