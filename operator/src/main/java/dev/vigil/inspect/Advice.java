package dev.vigil.inspect;

import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;

/** What would change a backend's traffic, by its state: the last line of {@code vigil why}. */
final class Advice {
  private Advice() {}

  static String of(Pod pod, BackendStatus b, boolean panic, Settings s, Instant now) {
    BackendState state = b.getState() == null ? BackendState.UNKNOWN : b.getState();
    String inPanic =
        panic && state != BackendState.DRAINING && state != BackendState.MAINT
            ? " Meanwhile the pool is in panic, so it is published anyway; panic ends when "
                + s.panicExit()
                + " of the pool's backends are available."
            : "";
    String held = held(pod, b);
    if (held != null) {
      return held;
    }
    return switch (state) {
      case UP ->
          "nothing: it takes traffic while its probes pass; "
              + s.fall()
              + " failing probes in a row take it Down, failing real requests can eject it.";
      case DOWN ->
          s.rise()
              + " passing probes in a row bring it Up"
              + s.every()
              + "; see the last probe's detail for why it fails."
              + inPanic;
      case EJECTED ->
          "its ejection ends "
              + (b.getEjectedUntil() == null ? "soon" : Times.at(b.getEjectedUntil(), now))
              + (s.unejectOnActivePass() ? ", or at its next passing probe" : "")
              + "; repeated ejections last longer (base ejection time x ejections)."
              + inPanic;
      case DAMPED ->
          "flap damping holds it back until "
              + (b.getDampedUntil() == null
                  ? "its merit decays"
                  : Times.at(b.getDampedUntil(), now))
              + ", when its flap merit has decayed to the reuse threshold; each new flap extends it."
              + inPanic;
      case DRAINING ->
          pod.getMetadata().getDeletionTimestamp() != null
              ? "nothing: the Pod is terminating."
              : "the kubelet marks the Pod Ready again (its own readiness probe), or the pool sets"
                  + " respectPodReadiness: false to ignore the kubelet's verdict.";
      case UNKNOWN -> "its first probe decides (Up after a pass, Down after a failure)." + inPanic;
      case MAINT -> "its maint hold is lifted (see the reason).";
    };
  }

  /**
   * Advice for a backend held by an admin state or its agent (the status reason says which, as
   * {@code PoolStatusAggregator.holdReason} writes it), or null.
   */
  private static String held(Pod pod, BackendStatus b) {
    String reason = b.getReason() == null ? "" : b.getReason();
    if (reason.startsWith("drain by admin") || reason.startsWith("maint by admin")) {
      return "an operator holds it out: kubectl vigil ready "
          + pod.getMetadata().getName()
          + " lifts the Pod annotation "
          + dev.vigil.health.AdminState.ANNOTATION
          + " (an entry in the pool's spec.adminStates must be removed from the spec); it does not"
          + " count toward panic or the ejection cap meanwhile.";
    }
    if (reason.startsWith("drain by agent") || reason.startsWith("maint by agent")) {
      return "its own agent holds it out (active.agent): it returns when the agent answers"
          + " 'ready'; it does not count toward panic or the ejection cap meanwhile.";
    }
    if (reason.startsWith("down by agent")) {
      return "its own agent reports it down (active.agent): it returns to its probes' verdict when"
          + " the agent answers 'up'.";
    }
    return null;
  }
}
