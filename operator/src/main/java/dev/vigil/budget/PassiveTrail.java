package dev.vigil.budget;

/**
 * One backend's recent passive outcomes, as much as its {@link ProbeClass} needs: when it last
 * failed, and the times of its last {@code k} successes (a ring; allocated at the first success, so
 * a backend nobody reports on costs one reference). O(1) per outcome and per question. Not
 * thread-safe: the pool's context only.
 */
public final class PassiveTrail {
  /** The most successes remembered: a larger {@code quietMinRequests} is counted as this. */
  public static final int MAX_REMEMBERED = 100;

  private long lastFailureMs = Long.MIN_VALUE;
  private long[] successes; // ring of success times, oldest at next when full
  private int next;
  private int count;

  /** Records one real-request outcome at {@code nowMs}; {@code remember} successes are kept. */
  public void record(boolean ok, long nowMs, int remember) {
    if (!ok) {
      lastFailureMs = nowMs;
      return;
    }
    int k = Math.max(1, Math.min(MAX_REMEMBERED, remember));
    if (successes == null || successes.length != k) {
      successes = new long[k];
      next = 0;
      count = 0;
    }
    successes[next] = nowMs;
    next = (next + 1) % k;
    count = Math.min(k, count + 1);
  }

  /** Whether a passive failure came after {@code sinceMs}. */
  public boolean failedSince(long sinceMs) {
    return lastFailureMs != Long.MIN_VALUE && lastFailureMs > sinceMs;
  }

  /**
   * Whether real traffic vouches for the backend: at least {@code minSuccesses} successes and no
   * failure after {@code sinceMs}.
   */
  public boolean vouches(long sinceMs, int minSuccesses) {
    int k = Math.min(MAX_REMEMBERED, minSuccesses);
    if (failedSince(sinceMs) || successes == null || count < k || k > successes.length) {
      return false;
    }
    // the k-th most recent success
    int slot = Math.floorMod(next - k, successes.length);
    return successes[slot] > sinceMs;
  }
}
