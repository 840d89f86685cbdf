package dev.vigil.runtime;

import dev.vigil.health.ActiveState;

/** A backend of a pool's runtime, looked up by id in its current {@link PoolView}: for tests. */
final class PoolViews {
  private PoolViews() {}

  /** The backend {@code id} as {@code runtime.view()} shows it; throws when there is none. */
  static BackendSnapshot backend(PoolRuntime runtime, String id) {
    return runtime.view().backends().stream()
        .filter(b -> b.member().id().equals(id))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no backend " + id + " in the pool's view"));
  }

  /** The active state the decision core holds for backend {@code id}. */
  static ActiveState state(PoolRuntime runtime, String id) {
    return backend(runtime, id).decision().state();
  }
}
