package dev.vigil.health;

import dev.vigil.health.HealthSettings.FailurePercentage;
import dev.vigil.health.HealthSettings.Latency;
import dev.vigil.health.HealthSettings.SuccessRate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Statistical outlier detection against peers for one {@link PoolHealth}: per-backend counters of
 * the current sweep interval, and at each sweep the backends that the success-rate,
 * failure-percentage and latency rules flag.
 *
 * <p>Cost: {@link #record} is O(1). {@link #detect} is O(t) for the t backends that had outcomes in
 * the interval (three passes; the latency median by quickselect, expected O(t)), plus O(f log f) to
 * order the f flagged ones; {@link #reset} is O(t). Backends without traffic cost nothing.
 */
final class OutlierDetector {
  /** Latencies above this (about 24 days) are counted as this, so sums never overflow. */
  static final long MAX_LATENCY_MS = Integer.MAX_VALUE;

  /** Rounding slack for the success-rate threshold, in percentage points. */
  private static final double EPSILON = 1e-9;

  /** Enforced before dry run, then rule order, then worst first, then the older backend. */
  private static final Comparator<Candidate> ORDER =
      Comparator.comparing((Candidate c) -> !c.enforce())
          .thenComparingInt(c -> c.rule().ordinal())
          .thenComparing(Comparator.comparingDouble(Candidate::severity).reversed())
          .thenComparingLong(c -> c.backend().serial);

  /** One flagged backend. {@code severity}: larger is worse (the order under the cap). */
  record Candidate(
      Backend backend, Ejection.Rule rule, boolean enforce, double severity, String reason) {}

  private Backend[] traffic = new Backend[16];
  private int trafficSize;
  private double[] means = new double[16];

  /**
   * Counts one outcome into b's interval counters. Nothing is counted while no rule is on, and a
   * local-origin error is left out when {@code splitLocalOrigin} (it is the reporting proxy's
   * failure; the local-origin run judges it). A negative latency is unknown: no sample.
   */
  void record(Backend b, boolean ok, Origin origin, long latencyMs, HealthSettings s) {
    if (!s.detectsOutliers() || (!ok && origin == Origin.LOCAL && s.splitLocalOrigin())) {
      return;
    }
    if (b.traffic == null) {
      b.traffic = new IntervalTraffic(); // kept once made: a backend with traffic has it again
    }
    if (b.traffic.index < 0) {
      if (trafficSize == traffic.length) {
        traffic = Arrays.copyOf(traffic, trafficSize * 2);
      }
      b.traffic.index = trafficSize;
      traffic[trafficSize++] = b;
    }
    b.traffic.requests++;
    if (ok) {
      b.traffic.successes++;
    }
    if (latencyMs >= 0) {
      long ms = Math.min(latencyMs, MAX_LATENCY_MS);
      b.traffic.latencySumMs += ms;
      b.traffic.latencySamples++;
      if (ms > b.traffic.latencyMaxMs) {
        b.traffic.latencyMaxMs = ms;
      }
    }
  }

  /** Forgets a removed backend's counters. O(1). */
  void forget(Backend b) {
    if (b.traffic == null || b.traffic.index < 0) {
      return;
    }
    Backend last = traffic[--trafficSize];
    traffic[b.traffic.index] = last;
    last.traffic.index = b.traffic.index;
    traffic[trafficSize] = null;
    clear(b);
  }

  /** Whether any backend had an outcome counted since the last reset. */
  boolean hasTraffic() {
    return trafficSize > 0;
  }

  /** Starts a new interval: every counter back to zero. */
  void reset() {
    for (int i = 0; i < trafficSize; i++) {
      clear(traffic[i]);
      traffic[i] = null;
    }
    trafficSize = 0;
  }

  private static void clear(Backend b) {
    b.traffic.clear();
  }

  /**
   * The backends the rules flag over this interval's counters, in the order to try them: enforced
   * rules before dry-run ones, then failure percentage, success rate, latency, then worst first, so
   * that under the cap the worst offenders go first. Backends already ejected are left out.
   */
  List<Candidate> detect(HealthSettings s) {
    Peers p = peers(s);
    if (p == null) {
      return List.of();
    }
    SuccessRate sr = s.successRate();
    FailurePercentage fp = s.failurePercentage();
    Latency lat = s.latency();
    List<Candidate> out = new ArrayList<>();
    for (int i = 0; i < trafficSize; i++) {
      Backend b = traffic[i];
      if (b.ejected) {
        continue;
      }
      if (p.fpOn && b.traffic.requests >= fp.requestVolume()) {
        long failures = b.traffic.requests - b.traffic.successes;
        if (failures > 0 && failures * 100 >= (long) fp.threshold() * b.traffic.requests) {
          out.add(failurePercentage(b, fp, s));
        }
      }
      if (p.srOn && b.traffic.requests >= sr.requestVolume()) {
        double rate = successPercent(b);
        if (rate < p.srThreshold - EPSILON) {
          out.add(successRate(b, sr, s, rate, p.srMean, p.srStdev, p.srThreshold, p.srHosts));
        }
      }
      if (p.latOn && latencyJudged(b, lat)) {
        double mean = meanLatency(b);
        if (mean > lat.factor() * p.median && mean > lat.floorMs()) {
          out.add(latency(b, lat, s, mean, p.median, p.latHosts));
        }
      }
    }
    out.sort(ORDER);
    return out;
  }

  /** What the rules compare each backend with: which rules have enough hosts, and their peers. */
  private record Peers(
      boolean srOn,
      boolean fpOn,
      boolean latOn,
      int srHosts,
      double srMean,
      double srStdev,
      double srThreshold,
      int latHosts,
      double median) {}

  /** The peers of this interval, or null when no rule has enough hosts. */
  private Peers peers(HealthSettings s) {
    SuccessRate sr = s.successRate();
    FailurePercentage fp = s.failurePercentage();
    Latency lat = s.latency();
    int srHosts = 0;
    double srSum = 0;
    int fpHosts = 0;
    int latHosts = 0;
    if (means.length < trafficSize) {
      means = new double[Math.max(trafficSize, means.length * 2)];
    }
    for (int i = 0; i < trafficSize; i++) {
      Backend b = traffic[i];
      if (sr != null && b.traffic.requests >= sr.requestVolume()) {
        srHosts++;
        srSum += successPercent(b);
      }
      if (fp != null && b.traffic.requests >= fp.requestVolume()) {
        fpHosts++;
      }
      if (lat != null && latencyJudged(b, lat)) {
        means[latHosts++] = meanLatency(b);
      }
    }
    boolean srOn = sr != null && srHosts >= sr.minimumHosts();
    boolean fpOn = fp != null && fpHosts >= fp.minimumHosts();
    boolean latOn = lat != null && latHosts >= lat.minimumHosts();
    if (!srOn && !fpOn && !latOn) {
      return null;
    }
    double srMean = srOn ? srSum / srHosts : 0;
    double srStdev = srOn ? stdev(sr, srMean, srHosts) : 0;
    double srThreshold = srMean - (srOn ? sr.stdevFactor() : 0) * srStdev;
    double median = latOn ? median(means, latHosts) : 0;
    return new Peers(srOn, fpOn, latOn, srHosts, srMean, srStdev, srThreshold, latHosts, median);
  }

  private double stdev(SuccessRate sr, double mean, int hosts) {
    double sum = 0;
    for (int i = 0; i < trafficSize; i++) {
      Backend b = traffic[i];
      if (b.traffic.requests >= sr.requestVolume()) {
        double d = successPercent(b) - mean;
        sum += d * d;
      }
    }
    return Math.sqrt(sum / hosts);
  }

  static double successPercent(Backend b) {
    return 100.0 * b.traffic.successes / b.traffic.requests;
  }

  /** Enough samples: at least {@code minimumSamples}, and two (one is left out of the mean). */
  static boolean latencyJudged(Backend b, Latency lat) {
    return b.traffic.latencySamples >= lat.minimumSamples() && b.traffic.latencySamples >= 2;
  }

  /**
   * The mean latency of the interval without its slowest sample, so that one slow request never
   * makes a backend an outlier, however slow it was.
   */
  static double meanLatency(Backend b) {
    return (double) (b.traffic.latencySumMs - b.traffic.latencyMaxMs)
        / (b.traffic.latencySamples - 1);
  }

  private static Candidate failurePercentage(Backend b, FailurePercentage fp, HealthSettings s) {
    long failures = b.traffic.requests - b.traffic.successes;
    double percent = 100.0 * failures / b.traffic.requests;
    String reason =
        "failure percentage "
            + pct(percent)
            + " >= threshold "
            + fp.threshold()
            + "% ("
            + failures
            + " of "
            + b.traffic.requests
            + " requests failed)";
    return new Candidate(
        b, Ejection.Rule.FAILURE_PERCENTAGE, s.enforces(fp.enforce()), percent, reason);
  }

  private static Candidate successRate(
      Backend b,
      SuccessRate sr,
      HealthSettings s,
      double rate,
      double mean,
      double stdev,
      double threshold,
      int hosts) {
    String reason =
        "success rate "
            + pct(rate)
            + " < mean "
            + pct(mean)
            + " - "
            + num(sr.stdevFactor())
            + " x stdev "
            + pct(stdev)
            + " (threshold "
            + pct(threshold)
            + ", "
            + b.traffic.requests
            + " requests, "
            + hosts
            + " backends)";
    return new Candidate(
        b, Ejection.Rule.SUCCESS_RATE, s.enforces(sr.enforce()), 100 - rate, reason);
  }

  private static Candidate latency(
      Backend b, Latency lat, HealthSettings s, double mean, double median, int hosts) {
    String reason =
        "mean latency "
            + num(mean)
            + "ms > "
            + num(lat.factor())
            + " x median "
            + num(median)
            + "ms and > floor "
            + lat.floorMs()
            + "ms ("
            + b.traffic.latencySamples
            + " samples, slowest left out, "
            + hosts
            + " backends)";
    return new Candidate(b, Ejection.Rule.LATENCY, s.enforces(lat.enforce()), mean, reason);
  }

  private static String pct(double v) {
    return num(v) + "%";
  }

  /** At most one decimal, none when it would be .0: {@code 97}, {@code 89.4}. */
  static String num(double v) {
    String s = String.format(Locale.ROOT, "%.1f", v);
    return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s;
  }

  // ---- median ----------------------------------------------------------------------------------

  /**
   * The median of {@code a[0..n)} (the mean of the two middle values when n is even); reorders the
   * array. Quickselect with a median-of-three pivot: expected O(n), and a sort of what is left when
   * it partitions badly, so never worse than O(n log n).
   */
  static double median(double[] a, int n) {
    int k = n / 2;
    select(a, n, k);
    double upper = a[k];
    if ((n & 1) == 1) {
      return upper;
    }
    double lower = a[0];
    for (int i = 1; i < k; i++) {
      lower = Math.max(lower, a[i]);
    }
    return lower + (upper - lower) / 2;
  }

  /** Puts the k-th smallest at a[k], smaller or equal values before it, larger or equal after. */
  private static void select(double[] a, int n, int k) {
    int lo = 0;
    int hi = n - 1;
    int budget = 2 * (32 - Integer.numberOfLeadingZeros(n));
    while (hi > lo) {
      if (budget-- == 0) {
        Arrays.sort(a, lo, hi + 1);
        return;
      }
      int mid = (lo + hi) >>> 1;
      double pivot = medianOfThree(a[lo], a[mid], a[hi]);
      int i = lo;
      int j = hi;
      while (i <= j) {
        while (a[i] < pivot) {
          i++;
        }
        while (a[j] > pivot) {
          j--;
        }
        if (i <= j) {
          double t = a[i];
          a[i++] = a[j];
          a[j--] = t;
        }
      }
      if (k <= j) {
        hi = j;
      } else if (k >= i) {
        lo = i;
      } else {
        return; // a[j+1 .. i-1] all equal the pivot, k among them
      }
    }
  }

  private static double medianOfThree(double x, double y, double z) {
    return Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
  }
}
