package dev.vigil.shard;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the {@link Sharder} may fence an expired shard Lease. Rounds follow each other a second
 * apart. A longer gap means this process, or its node, stood still (a GC pause, a starved or frozen
 * VM): every replica on that node, and any renewal in flight to a stalled API server, may have
 * missed its Lease just as this one did. Fencing them all at once would stop every replica (a CI
 * run of ShardingE2E: 17 s of nothing, then the sharder fenced all three replicas, itself
 * included). So after such a gap the replicas get one renew deadline to renew before an expired
 * Lease is fenced; a replica that is really gone is fenced that much later.
 *
 * <p>Not thread-safe: used from the sharder's rounds only, which are synchronized.
 */
final class FencingHold {
  /** The sharder's logger: its line about a standstill reads as before. */
  private static final Logger LOG = LoggerFactory.getLogger(Sharder.class);

  private final ShardConfig config;

  /** The clock when the last round ended, or -1 before the first. */
  private long lastRoundEnd = -1;

  /** No shard is fenced before this. */
  private long fenceNotBefore;

  FencingHold(ShardConfig config) {
    this.config = config;
  }

  /** At the start of a round: true while expired Leases are to be treated as live. */
  boolean holds(long now) {
    if (lastRoundEnd < 0) {
      // A sharder just elected has watched the Leases for no time: after a freeze that also cost
      // the last leader its election, renewals may be about to land. It fences nothing at first.
      fenceNotBefore = now + config.renewDeadlineMs();
    } else if (now - lastRoundEnd > config.renewPeriod().toMillis()) {
      fenceNotBefore = now + config.renewDeadlineMs();
      LOG.info(
          "sharder: {} ms since its last round (this process stood still): expired shard Leases"
              + " are not fenced for {} ms, so their replicas can renew first",
          now - lastRoundEnd,
          config.renewDeadlineMs());
    }
    return now < fenceNotBefore;
  }

  /** At the end of a round, with the clock then. */
  void roundEnded(long end) {
    lastRoundEnd = end;
  }
}
