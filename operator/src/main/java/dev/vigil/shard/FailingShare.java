package dev.vigil.shard;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.function.LongSupplier;

/**
 * This replica's failing share f over a sliding window (docs/design.md §8): a sample of (backends
 * whose last probe failed, backends probed), summed over its pools, is taken at each shard Lease
 * renewal; f = the sum of the failing counts over the sum of the probed counts of the samples taken
 * within the last {@link #WINDOW} (those at most 60 s old, the one just taken included), and 0 when
 * nothing was probed. Weighting by the probed counts makes f the share of failing probe targets
 * over the minute, whatever the pools' sizes, and a single renewal cannot swing it once the window
 * holds a minute of samples. Pure: the clock is injected.
 *
 * <p>{@link #sample} runs on one thread (the Lease's tick); {@link #share} from any thread.
 */
public final class FailingShare {
  /** The design's sliding 60 s. */
  public static final Duration WINDOW = Duration.ofSeconds(60);

  /** A bound on the samples kept, whatever the clock does (a renewal a second holds 61). */
  static final int MAX_SAMPLES = 1_000;

  private record Sample(long at, long failing, long probed) {}

  private final long windowMs;
  private final LongSupplier clock;
  private final ArrayDeque<Sample> samples = new ArrayDeque<>();
  private long failing;
  private long probed;
  private volatile double share;

  /**
   * @param clock milliseconds
   */
  public FailingShare(Duration window, LongSupplier clock) {
    if (window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("the failing share's window must be positive");
    }
    this.windowMs = window.toMillis();
    this.clock = clock;
  }

  /**
   * Takes a sample now, drops those older than the window, and returns the share.
   *
   * @param failingNow backends whose last probe failed, over all pools
   * @param probedNow backends probed, over all pools
   */
  public synchronized double sample(long failingNow, long probedNow) {
    if (failingNow < 0 || probedNow < 0 || failingNow > probedNow) {
      throw new IllegalArgumentException(
          "a sample needs 0 <= failing <= probed, got " + failingNow + " of " + probedNow);
    }
    long now = clock.getAsLong();
    samples.addLast(new Sample(now, failingNow, probedNow));
    failing += failingNow;
    probed += probedNow;
    while (!samples.isEmpty()
        && (samples.peekFirst().at() < now - windowMs || samples.size() > MAX_SAMPLES)) {
      Sample old = samples.removeFirst();
      failing -= old.failing();
      probed -= old.probed();
    }
    share = probed == 0 ? 0 : (double) failing / probed;
    return share;
  }

  /** The share as of the last sample; 0 before the first. */
  public double share() {
    return share;
  }
}
