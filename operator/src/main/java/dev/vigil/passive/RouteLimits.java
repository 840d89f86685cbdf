package dev.vigil.passive;

/**
 * The bounds of routing outcomes between replicas (docs/passive.md, "Routing between replicas").
 *
 * @param deadlineMs how long a delivery keeps trying (a moving pool, a dead owner) before the
 *     reporter is answered "retry"; 0: one try (a single replica has no other owner to find)
 * @param forwardTimeoutMs how long one forward waits for the owner's answer
 * @param retryPauseMs the pause before a try after the pool was not found where it was looked for
 * @param maxBytesInFlight forwarded outcomes' bytes (as estimated) waiting for answers, all owners
 * @param maxBatchesPerPeer forwards to one owner in flight at once; more parts wait and go together
 * @param maxPartsPerBatch parts of one forward (each one pool's outcomes of one delivery)
 * @param rememberMs how long an owner remembers a forwarded part's id and answer
 * @param rememberCapacity how many ids an owner remembers at most (the oldest forgotten first)
 */
public record RouteLimits(
    long deadlineMs,
    long forwardTimeoutMs,
    long retryPauseMs,
    long maxBytesInFlight,
    int maxBatchesPerPeer,
    int maxPartsPerBatch,
    long rememberMs,
    int rememberCapacity) {

  public RouteLimits {
    if (deadlineMs < 0
        || forwardTimeoutMs < 1
        || retryPauseMs < 1
        || maxBytesInFlight < 1
        || maxBatchesPerPeer < 1
        || maxPartsPerBatch < 1
        || rememberMs < 1
        || rememberCapacity < 1) {
      throw new IllegalArgumentException("route limits must be positive (the deadline >= 0)");
    }
  }

  /**
   * A sharded replica's: keep trying for 5 s (a handoff takes about a second, a dead owner's pools
   * move after its Lease expires), 2 s per forward, 32 MiB in flight, 8 forwards per owner, ids
   * remembered 2 minutes (far past any sender's last try), at most 200,000 of them.
   */
  public static RouteLimits defaults() {
    return new RouteLimits(5_000, 2_000, 100, 32L << 20, 8, 256, 120_000, 200_000);
  }

  /** A single replica's: one try, here. */
  public static RouteLimits local() {
    return new RouteLimits(0, 2_000, 100, 32L << 20, 8, 256, 120_000, 200_000);
  }

  public RouteLimits withDeadlineMs(long v) {
    return new RouteLimits(
        v,
        forwardTimeoutMs,
        retryPauseMs,
        maxBytesInFlight,
        maxBatchesPerPeer,
        maxPartsPerBatch,
        rememberMs,
        rememberCapacity);
  }
}
