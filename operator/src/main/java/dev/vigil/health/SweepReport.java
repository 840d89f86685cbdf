package dev.vigil.health;

import java.util.List;

/**
 * What one {@link PoolHealth#sweepReport(long)} did.
 *
 * @param decayed how many ejection multipliers decayed by one
 * @param ejections what the statistical rules did, at most one entry per backend, in the order they
 *     were applied (immutable; empty when no rule flagged anybody)
 */
public record SweepReport(int decayed, List<Ejection> ejections) {
  static final SweepReport NOTHING = new SweepReport(0, List.of());

  public SweepReport {
    ejections = List.copyOf(ejections);
  }
}
