package dev.vigil.demo;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.runtime.PoolView;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the demo saw at one moment: the EndpointSlices' endpoints (from the API server, as a
 * consumer sees them), the BackendPool and its Events, and the runtime's view (streaks).
 *
 * @param elapsedMs since the demo started
 * @param endpoints address to ready, from the EndpointSlices
 * @param pool the BackendPool, or null
 * @param events the pool's Events, oldest first
 * @param view the runtime view, or null
 * @param refusedEjections the operator's {@code vigil_ejections_refused_total} for the pool
 */
public record Observation(
    long elapsedMs,
    Map<String, Boolean> endpoints,
    BackendPool pool,
    List<Event> events,
    PoolView view,
    double refusedEjections) {

  public Set<String> ready() {
    Set<String> out = new TreeSet<>();
    endpoints.forEach(
        (ip, ready) -> {
          if (ready) {
            out.add(ip);
          }
        });
    return out;
  }

  /** The pool's condition of that type, or null. */
  public Condition condition(String type) {
    if (pool == null || pool.getStatus() == null || pool.getStatus().getConditions() == null) {
      return null;
    }
    return pool.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  /** Panic as the runtime decided it (status follows within the status interval). */
  public boolean panic() {
    return view != null && view.snapshot().panic();
  }

  public boolean statusPanic() {
    Condition c = condition("Panic");
    return c != null && "True".equals(c.getStatus());
  }

  public boolean hasEvent(String reason) {
    return events.stream().anyMatch(e -> reason.equals(e.getReason()));
  }

  /**
   * Status, slices and the runtime agree: the slices' ready set is what the runtime publishes, and
   * every backend status lists shows the runtime's state. Status is coalesced and the slices are
   * not, so right after a change they may differ for up to the status interval.
   */
  public boolean settled() {
    if (view == null || pool == null || pool.getStatus() == null) {
      return false;
    }
    Set<String> published = new TreeSet<>();
    Map<String, dev.vigil.api.v1alpha1.BackendState> states = new java.util.HashMap<>();
    for (var b : view.backends()) {
      if (b.published()) {
        published.add(b.member().ip());
      }
      states.put(b.member().id(), dev.vigil.publish.PoolStatusAggregator.stateOf(b.decision()));
    }
    if (!published.equals(ready())) {
      return false;
    }
    List<dev.vigil.api.v1alpha1.BackendStatus> listed =
        pool.getStatus().getBackends() == null ? List.of() : pool.getStatus().getBackends();
    for (var b : listed) {
      if (b.getState() != states.get(b.getPod())) {
        return false;
      }
    }
    return true;
  }
}
