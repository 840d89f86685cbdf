package dev.vigil.health;

/**
 * The failures-within-a-window rule's memory of one backend (docs/design.md §2.2, nginx {@code
 * max_fails} within {@code fail_timeout}): the times of its last {@code n} counted failures, in a
 * ring. The failures of the last window (times {@code > now - window}) reach {@code n} exactly when
 * the oldest of the last {@code n} is inside the window, since times never go back: O(1) per
 * failure.
 */
final class FailureWindow {
  private final long[] times;
  private int next; // where the next time goes; once full, also the oldest
  private int count;

  FailureWindow(int n) {
    times = new long[n];
  }

  /** The {@code n} this ring was made for. */
  int size() {
    return times.length;
  }

  /**
   * Records a failure at {@code now}; true when the failures within the last {@code windowMs} (this
   * one included) reach the ring's size.
   */
  boolean record(long now, long windowMs) {
    times[next] = now;
    next = next + 1 == times.length ? 0 : next + 1;
    if (count < times.length) {
      count++;
    }
    return count == times.length && times[next] > now - windowMs;
  }

  /** Forgets every failure (an ejection, like the error runs). */
  void clear() {
    next = 0;
    count = 0;
  }

  /** Failures remembered (at most the ring's size), for tests and views. */
  int count() {
    return count;
  }
}
