package dev.vigil.probe;

import io.vertx.core.Future;

/**
 * Probes one backend once. Implementations never throw and never fail the future: every failure
 * (including a defect of the prober) becomes a failed {@link ProbeResult}. The future completes at
 * the latest shortly after {@link CheckSpec#timeout()}.
 */
public interface Prober {

  Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec);

  /**
   * The backend is gone: release anything kept for it (an idle reused connection). Probes in flight
   * still complete.
   */
  default void forget(ProbeTarget target) {}

  /** Releases clients and connections. */
  default Future<Void> close() {
    return Future.succeededFuture();
  }
}
