package dev.vigil.runtime;

import dev.vigil.health.EjectionDecision;
import java.util.BitSet;
import java.util.List;

/**
 * What a batch of outcomes did in one pool.
 *
 * @param unknown indexes (into the batch) of outcomes whose address is no backend of the pool
 * @param decisions the outcomes that ejected a backend, were refused by the cap, or would have
 *     ejected in a dry run (most outcomes decide nothing and are not listed)
 */
public record AppliedOutcomes(BitSet unknown, List<Decided> decisions) {

  /** An outcome that decided something about its backend. */
  public record Decided(String backend, EjectionDecision decision) {}
}
