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
 * @param repeat the batch's idempotency key had ejected a backend of the pool before (here, or at
 *     the owner status was restored from): nothing of it was applied again
 */
public record AppliedOutcomes(BitSet unknown, List<Decided> decisions, boolean repeat) {

  public AppliedOutcomes(BitSet unknown, List<Decided> decisions) {
    this(unknown, decisions, false);
  }

  /** An outcome that decided something about its backend. */
  public record Decided(String backend, EjectionDecision decision) {}
}
