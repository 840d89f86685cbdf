package dev.vigil.health;

/**
 * One backend's real-request outcomes counted for the statistical rules since the last sweep
 * ({@link OutlierDetector}), apart from {@link Backend} so that backends nobody reports on, and
 * pools without those rules, carry none of it.
 */
final class IntervalTraffic {
  int index = -1; // position in the detector's list of backends with outcomes this interval
  long requests;
  long successes;
  long latencySumMs;
  long latencySamples;
  long latencyMaxMs;

  /** A new interval: no outcomes, out of the detector's list. */
  void clear() {
    index = -1;
    requests = 0;
    successes = 0;
    latencySumMs = 0;
    latencySamples = 0;
    latencyMaxMs = 0;
  }
}
