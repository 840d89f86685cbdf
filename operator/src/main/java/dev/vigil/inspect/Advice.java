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
        panic && state != BackendState.DRAINING
            ? " Meanwhile the pool is in panic, so it is published anyway; panic ends when "
                + s.panicExit()
                + " of the pool's backends are available."
            : "";
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
    };
  }
}
