package dev.vigil.runtime;

/**
 * How many of the backends a replica probes failed their last probe (docs/design.md §8, the failing
 * share's counts): of one pool, or summed over a replica's pools. A backend not probed yet counts
 * as probed and not failing.
 *
 * @param failing backends whose last probe failed
 * @param probed backends probed (every member of the pools)
 */
public record FailingBackends(int failing, int probed) {
  public static final FailingBackends NONE = new FailingBackends(0, 0);

  public FailingBackends plus(FailingBackends other) {
    return new FailingBackends(failing + other.failing, probed + other.probed);
  }
}
