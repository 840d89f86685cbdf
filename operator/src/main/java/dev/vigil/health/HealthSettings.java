package dev.vigil.health;

/**
 * The decision-relevant part of a {@code HealthPolicy}, resolved once: defaults applied
 * (docs/design.md §1), every value checked. Durations are milliseconds. Build one with {@link
 * #builder()}; the canonical constructor validates too, so no invalid instance can exist.
 *
 * <p>Statistical outlier detection against peers ({@code passive.successRate}, {@code
 * passive.failurePercentage}, {@code passive.latency}) is one nested record per rule, null when the
 * rule is off. A rule ejects only when both {@code passive.enforce} and its own {@code enforce} are
 * true ({@link #enforces(boolean)}); otherwise it is a dry run.
 *
 * @param intervalMs {@code active.interval}: time between probes of one backend
 * @param timeoutMs {@code active.timeout}: deadline of one probe, below the interval
 * @param jitterPercent {@code active.jitterPercent}: each wait is interval +/- this percent
 * @param rise {@code active.rise}: passes in a row that bring a Down backend Up
 * @param fall {@code active.fall}: fails in a row that take an Up backend Down
 * @param consecutiveErrors {@code passive.consecutiveErrors}: errors in a row that eject; 0 = off
 * @param consecutiveLocalOriginErrors {@code passive.consecutiveLocalOriginErrors}: the same for
 *     local-origin errors when {@code splitLocalOrigin}; 0 = off
 * @param splitLocalOrigin {@code passive.splitLocalOrigin}: count local-origin errors on their own
 *     run
 * @param baseEjectionTimeMs {@code passive.baseEjectionTime}: an ejection lasts this times the
 *     multiplier
 * @param maxEjectionTimeMs {@code passive.maxEjectionTime}: cap on one ejection
 * @param maxEjectionPercent {@code passive.maxEjectionPercent}: cap on the share of the pool out
 * @param alwaysEjectOne {@code passive.alwaysEjectOne}: allow one ejection whatever the percent
 * @param sweepIntervalMs {@code passive.sweepInterval}: how often the runtime should call {@link
 *     PoolHealth#sweep(long)}
 * @param unejectOnActivePass {@code passive.unejectOnActivePass}: a passing probe ends an ejection
 * @param enforce {@code passive.enforce}: false = dry run, report would-be ejections only
 * @param successRate {@code passive.successRate}, or null (off)
 * @param failurePercentage {@code passive.failurePercentage}, or null (off)
 * @param latency {@code passive.latency}, or null (off)
 * @param panicThresholdPercent {@code panicThresholdPercent}: enter panic below this share; 0 = off
 * @param panicExitPercent {@code panicExitPercent}: leave panic at or above this share
 * @param fastIntervalMs {@code active.fastInterval}: time between probes while a backend is
 *     mid-streak toward a change ({@link ProbePhase#FAST}); defaults to the interval
 * @param downIntervalMs {@code active.downInterval}: time between probes while a backend is Down
 *     with no pass run ({@link ProbePhase#DOWN}); defaults to the interval
 * @param damping {@code damping} (flap damping, docs/design.md §2.1), or null (off)
 * @param windowFailures {@code passive.windowFailures}: failed requests within {@code
 *     failureWindowMs} that eject (docs/design.md §2.2, nginx {@code max_fails}); 0 = off
 * @param failureWindowMs {@code passive.failureWindow}: the window of {@code windowFailures} (nginx
 *     {@code fail_timeout})
 */
public record HealthSettings(
    long intervalMs,
    long timeoutMs,
    int jitterPercent,
    int rise,
    int fall,
    int consecutiveErrors,
    int consecutiveLocalOriginErrors,
    boolean splitLocalOrigin,
    long baseEjectionTimeMs,
    long maxEjectionTimeMs,
    int maxEjectionPercent,
    boolean alwaysEjectOne,
    long sweepIntervalMs,
    boolean unejectOnActivePass,
    boolean enforce,
    SuccessRate successRate,
    FailurePercentage failurePercentage,
    Latency latency,
    int panicThresholdPercent,
    int panicExitPercent,
    long fastIntervalMs,
    long downIntervalMs,
    Damping damping,
    int windowFailures,
    long failureWindowMs) {

  /** The smallest {@code active.interval} accepted. */
  public static final long MIN_INTERVAL_MS = 100;

  /** Checks every field; throws {@link InvalidSettingsException} naming the first bad one. */
  public HealthSettings {
    atLeast("active.interval", intervalMs, MIN_INTERVAL_MS, "ms");
    atLeast("active.timeout", timeoutMs, 1, "ms");
    if (timeoutMs >= intervalMs) {
      throw new InvalidSettingsException(
          "active.timeout",
          "must be below active.interval (" + intervalMs + "ms), was " + timeoutMs + "ms");
    }
    between("active.jitterPercent", jitterPercent, 0, 50);
    between("active.rise", rise, 1, 100);
    between("active.fall", fall, 1, 100);
    between("passive.consecutiveErrors", consecutiveErrors, 0, 1000);
    between("passive.consecutiveLocalOriginErrors", consecutiveLocalOriginErrors, 0, 1000);
    atLeast("passive.baseEjectionTime", baseEjectionTimeMs, 1, "ms");
    if (maxEjectionTimeMs < baseEjectionTimeMs) {
      throw new InvalidSettingsException(
          "passive.maxEjectionTime",
          "must be at least passive.baseEjectionTime ("
              + baseEjectionTimeMs
              + "ms), was "
              + maxEjectionTimeMs
              + "ms");
    }
    between("passive.maxEjectionPercent", maxEjectionPercent, 0, 100);
    atLeast("passive.sweepInterval", sweepIntervalMs, 1, "ms");
    between("panicThresholdPercent", panicThresholdPercent, 0, 100);
    between("panicExitPercent", panicExitPercent, panicThresholdPercent, 100);
    phaseInterval("active.fastInterval", fastIntervalMs, timeoutMs);
    phaseInterval("active.downInterval", downIntervalMs, timeoutMs);
    between("passive.windowFailures", windowFailures, 0, 1000);
    atLeast("passive.failureWindow", failureWindowMs, 1, "ms");
  }

  private static void phaseInterval(String field, long ms, long timeoutMs) {
    atLeast(field, ms, MIN_INTERVAL_MS, "ms");
    if (ms <= timeoutMs) {
      throw new InvalidSettingsException(
          field, "must be above active.timeout (" + timeoutMs + "ms), was " + ms + "ms");
    }
  }

  /** The time between probes of a backend in this phase (before jitter). */
  public long intervalMs(ProbePhase phase) {
    return switch (phase) {
      case NORMAL -> intervalMs;
      case FAST -> fastIntervalMs;
      case DOWN -> downIntervalMs;
    };
  }

  /** Whether flap damping is on (the policy has a {@code damping} block). */
  public boolean damps() {
    return damping != null;
  }

  /** docs/design.md §1 defaults throughout. */
  public static HealthSettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these values, to change a few. */
  public Builder toBuilder() {
    return new Builder()
        .intervalMs(intervalMs)
        .timeoutMs(timeoutMs)
        .jitterPercent(jitterPercent)
        .rise(rise)
        .fall(fall)
        .consecutiveErrors(consecutiveErrors)
        .consecutiveLocalOriginErrors(consecutiveLocalOriginErrors)
        .splitLocalOrigin(splitLocalOrigin)
        .baseEjectionTimeMs(baseEjectionTimeMs)
        .maxEjectionTimeMs(maxEjectionTimeMs)
        .maxEjectionPercent(maxEjectionPercent)
        .alwaysEjectOne(alwaysEjectOne)
        .sweepIntervalMs(sweepIntervalMs)
        .unejectOnActivePass(unejectOnActivePass)
        .enforce(enforce)
        .successRate(successRate)
        .failurePercentage(failurePercentage)
        .latency(latency)
        .panicThresholdPercent(panicThresholdPercent)
        .panicExitPercent(panicExitPercent == panicThresholdPercent ? null : panicExitPercent)
        .fastIntervalMs(fastIntervalMs == intervalMs ? null : fastIntervalMs)
        .downIntervalMs(downIntervalMs == intervalMs ? null : downIntervalMs)
        .damping(damping)
        .windowFailures(windowFailures)
        .failureWindowMs(failureWindowMs);
  }

  /** Whether panic is on at all ({@code panicThresholdPercent} above 0). */
  public boolean panicEnabled() {
    return panicThresholdPercent > 0;
  }

  /** Whether any statistical rule is on (outcomes are then counted per sweep interval). */
  public boolean detectsOutliers() {
    return successRate != null || failurePercentage != null || latency != null;
  }

  /** Whether a rule with this own {@code enforce} ejects: both it and {@code passive.enforce}. */
  public boolean enforces(boolean ruleEnforce) {
    return enforce && ruleEnforce;
  }

  /**
   * {@code passive.successRate} (Envoy's success-rate detection): among the backends with at least
   * {@code requestVolume} requests in the sweep interval, when there are at least {@code
   * minimumHosts} of them, eject a backend whose success rate is below {@code mean - stdevFactor x
   * stdev} of theirs. {@code stdevFactor} is a plain factor (Envoy's 1900 is 1.9 here).
   */
  public record SuccessRate(
      int minimumHosts, int requestVolume, double stdevFactor, boolean enforce) {
    public SuccessRate {
      between("passive.successRate.minimumHosts", minimumHosts, 1, 10_000);
      between("passive.successRate.requestVolume", requestVolume, 1, 1_000_000);
      if (!(stdevFactor > 0 && stdevFactor <= 10)) {
        throw new InvalidSettingsException(
            "passive.successRate.stdevFactor",
            "must be above 0 and at most 10, was " + stdevFactor);
      }
    }

    /** The CRD's defaults: 5 hosts, 100 requests, factor 1.9, enforced. */
    public static SuccessRate defaults() {
      return new SuccessRate(5, 100, 1.9, true);
    }
  }

  /**
   * {@code passive.failurePercentage} (Envoy's failure-percentage detection): among the backends
   * with at least {@code requestVolume} requests in the sweep interval, when there are at least
   * {@code minimumHosts} of them, eject a backend whose share of failed requests is at or above
   * {@code threshold} percent (and that failed at least once).
   */
  public record FailurePercentage(
      int threshold, int minimumHosts, int requestVolume, boolean enforce) {
    public FailurePercentage {
      between("passive.failurePercentage.threshold", threshold, 0, 100);
      between("passive.failurePercentage.minimumHosts", minimumHosts, 1, 10_000);
      between("passive.failurePercentage.requestVolume", requestVolume, 1, 1_000_000);
    }

    /** The CRD's defaults: 85 %, 5 hosts, 50 requests, enforced. */
    public static FailurePercentage defaults() {
      return new FailurePercentage(85, 5, 50, true);
    }
  }

  /**
   * {@code passive.latency}: among the backends with at least {@code minimumSamples} latency
   * samples in the sweep interval, when there are at least {@code minimumHosts} of them, eject a
   * backend whose mean latency is above {@code factor x} the median of their means AND above {@code
   * floorMs}. {@code minimumHosts} is not in the CRD yet ({@link #DEFAULT_MINIMUM_HOSTS}).
   */
  public record Latency(
      double factor, int minimumHosts, int minimumSamples, long floorMs, boolean enforce) {
    /**
     * {@code minimumHosts} when not given: as Envoy's success-rate and failure-percentage rules.
     */
    public static final int DEFAULT_MINIMUM_HOSTS = 5;

    public Latency {
      if (!(factor >= 1 && factor <= 100)) {
        throw new InvalidSettingsException(
            "passive.latency.factor", "must be between 1 and 100, was " + factor);
      }
      between("passive.latency.minimumHosts", minimumHosts, 1, 10_000);
      between("passive.latency.minimumSamples", minimumSamples, 1, 1_000_000);
      atLeast("passive.latency.floor", floorMs, 0, "ms");
    }

    /** With {@link #DEFAULT_MINIMUM_HOSTS}. */
    public Latency(double factor, int minimumSamples, long floorMs, boolean enforce) {
      this(factor, DEFAULT_MINIMUM_HOSTS, minimumSamples, floorMs, enforce);
    }

    /** The CRD's defaults: factor 3, 5 hosts, 20 samples, floor 200 ms, enforced. */
    public static Latency defaults() {
      return new Latency(3.0, 20, 200, true);
    }
  }

  /**
   * {@code damping}: flap damping after BGP route-flap damping (RFC 2439), exactly as
   * docs/design.md §2.1. Each active transition Up to Down or Down to Up adds {@code penalty} to
   * the backend's merit, which halves every {@code halfLifeMs} and is capped at {@link #ceiling()};
   * a merit above {@code suppressThreshold} right after a penalty damps the backend, which is
   * released at the first millisecond its decayed merit is at or below {@code reuseThreshold}.
   */
  public record Damping(
      int penalty,
      int suppressThreshold,
      int reuseThreshold,
      long halfLifeMs,
      long maxSuppressTimeMs) {
    /** The smallest {@code damping.halfLife} accepted. */
    public static final long MIN_HALF_LIFE_MS = 1_000;

    public Damping {
      between("damping.penalty", penalty, 1, 1_000_000);
      between("damping.suppressThreshold", suppressThreshold, 1, 1_000_000);
      between("damping.reuseThreshold", reuseThreshold, 1, 1_000_000);
      if (reuseThreshold >= suppressThreshold) {
        throw new InvalidSettingsException(
            "damping.reuseThreshold",
            "must be below damping.suppressThreshold ("
                + suppressThreshold
                + "), was "
                + reuseThreshold);
      }
      atLeast("damping.halfLife", halfLifeMs, MIN_HALF_LIFE_MS, "ms");
      atLeast("damping.maxSuppressTime", maxSuppressTimeMs, 1, "ms");
      if (maxSuppressTimeMs > 1_000 * halfLifeMs) {
        throw new InvalidSettingsException(
            "damping.maxSuppressTime",
            "must be at most 1000 x damping.halfLife ("
                + halfLifeMs
                + "ms), was "
                + maxSuppressTimeMs
                + "ms");
      }
    }

    /**
     * docs/design.md §1 defaults: penalty 1000, suppress 3000, reuse 750, half-life 60s, max 300s.
     */
    public static Damping defaults() {
      return new Damping(1000, 3000, 750, 60_000, 300_000);
    }

    /**
     * The cap on a merit: {@code reuseThreshold x 2^(maxSuppressTime / halfLife)}, so no
     * suppression outlasts {@code maxSuppressTime} after the last flap.
     */
    public double ceiling() {
      return reuseThreshold * Math.pow(2, (double) maxSuppressTimeMs / halfLifeMs);
    }

    /**
     * A merit {@code m} set at {@code t0}, decayed to {@code t}: {@code m x 2^(-(t-t0)/halfLife)}.
     */
    public double decay(double m, long t0, long t) {
      return m == 0 ? 0 : m * Math.pow(2, -(double) (t - t0) / halfLifeMs);
    }

    /**
     * The first millisecond after {@code t0} at which merit {@code m} set at {@code t0} has decayed
     * to {@code reuseThreshold} or below: the closed form rounded up, then corrected by the formula
     * of {@link #decay} itself (semi-monotonic), so it is exact for that formula.
     */
    public long releaseAt(double m, long t0) {
      if (m <= reuseThreshold) {
        return t0;
      }
      long t = t0 + (long) Math.ceil(halfLifeMs * (Math.log(m / reuseThreshold) / Math.log(2)));
      while (decay(m, t0, t) > reuseThreshold) {
        t++;
      }
      while (t - 1 > t0 && decay(m, t0, t - 1) <= reuseThreshold) {
        t--;
      }
      return t;
    }
  }

  private static void between(String field, int value, int min, int max) {
    if (value < min || value > max) {
      throw new InvalidSettingsException(
          field, "must be between " + min + " and " + max + ", was " + value);
    }
  }

  private static void atLeast(String field, long value, long min, String unit) {
    if (value < min) {
      throw new InvalidSettingsException(
          field, "must be at least " + min + unit + ", was " + value + unit);
    }
  }

  /** Starts from docs/design.md §1 defaults; {@link #build()} validates. */
  public static final class Builder {
    private long intervalMs = 5_000;
    private long timeoutMs = 2_000;
    private int jitterPercent = 10;
    private int rise = 2;
    private int fall = 3;
    private int consecutiveErrors = 5;
    private int consecutiveLocalOriginErrors = 5;
    private boolean splitLocalOrigin = true;
    private long baseEjectionTimeMs = 30_000;
    private long maxEjectionTimeMs = 300_000;
    private int maxEjectionPercent = 10;
    private boolean alwaysEjectOne = false;
    private long sweepIntervalMs = 10_000;
    private boolean unejectOnActivePass = false;
    private boolean enforce = true;
    private SuccessRate successRate;
    private FailurePercentage failurePercentage;
    private Latency latency;
    private int panicThresholdPercent = 50;
    private Integer panicExitPercent; // null: equal to the threshold
    private Long fastIntervalMs; // null: equal to the interval
    private Long downIntervalMs; // null: equal to the interval
    private Damping damping;
    private int windowFailures = 0;
    private long failureWindowMs = 10_000;

    private Builder() {}

    /** {@code passive.windowFailures}; 0 (the default) turns the rule off. */
    public Builder windowFailures(int v) {
      windowFailures = v;
      return this;
    }

    /** {@code passive.failureWindow} in ms (default 10 s). */
    public Builder failureWindowMs(long v) {
      failureWindowMs = v;
      return this;
    }

    /** {@code active.fastInterval}; null (the default) means equal to the interval. */
    public Builder fastIntervalMs(Long v) {
      fastIntervalMs = v;
      return this;
    }

    /** {@code active.downInterval}; null (the default) means equal to the interval. */
    public Builder downIntervalMs(Long v) {
      downIntervalMs = v;
      return this;
    }

    /** {@code damping}; null (the default) turns flap damping off. */
    public Builder damping(Damping v) {
      damping = v;
      return this;
    }

    public Builder intervalMs(long v) {
      intervalMs = v;
      return this;
    }

    public Builder timeoutMs(long v) {
      timeoutMs = v;
      return this;
    }

    public Builder jitterPercent(int v) {
      jitterPercent = v;
      return this;
    }

    public Builder rise(int v) {
      rise = v;
      return this;
    }

    public Builder fall(int v) {
      fall = v;
      return this;
    }

    public Builder consecutiveErrors(int v) {
      consecutiveErrors = v;
      return this;
    }

    public Builder consecutiveLocalOriginErrors(int v) {
      consecutiveLocalOriginErrors = v;
      return this;
    }

    public Builder splitLocalOrigin(boolean v) {
      splitLocalOrigin = v;
      return this;
    }

    public Builder baseEjectionTimeMs(long v) {
      baseEjectionTimeMs = v;
      return this;
    }

    public Builder maxEjectionTimeMs(long v) {
      maxEjectionTimeMs = v;
      return this;
    }

    public Builder maxEjectionPercent(int v) {
      maxEjectionPercent = v;
      return this;
    }

    public Builder alwaysEjectOne(boolean v) {
      alwaysEjectOne = v;
      return this;
    }

    public Builder sweepIntervalMs(long v) {
      sweepIntervalMs = v;
      return this;
    }

    public Builder unejectOnActivePass(boolean v) {
      unejectOnActivePass = v;
      return this;
    }

    public Builder enforce(boolean v) {
      enforce = v;
      return this;
    }

    /** {@code passive.successRate}; null (the default) turns the rule off. */
    public Builder successRate(SuccessRate v) {
      successRate = v;
      return this;
    }

    /** {@code passive.failurePercentage}; null (the default) turns the rule off. */
    public Builder failurePercentage(FailurePercentage v) {
      failurePercentage = v;
      return this;
    }

    /** {@code passive.latency}; null (the default) turns the rule off. */
    public Builder latency(Latency v) {
      latency = v;
      return this;
    }

    public Builder panicThresholdPercent(int v) {
      panicThresholdPercent = v;
      return this;
    }

    /** Leave panic only at or above this share; null (the default) means equal to the threshold. */
    public Builder panicExitPercent(Integer v) {
      panicExitPercent = v;
      return this;
    }

    public HealthSettings build() {
      return new HealthSettings(
          intervalMs,
          timeoutMs,
          jitterPercent,
          rise,
          fall,
          consecutiveErrors,
          consecutiveLocalOriginErrors,
          splitLocalOrigin,
          baseEjectionTimeMs,
          maxEjectionTimeMs,
          maxEjectionPercent,
          alwaysEjectOne,
          sweepIntervalMs,
          unejectOnActivePass,
          enforce,
          successRate,
          failurePercentage,
          latency,
          panicThresholdPercent,
          panicExitPercent == null ? panicThresholdPercent : panicExitPercent,
          fastIntervalMs == null ? intervalMs : fastIntervalMs,
          downIntervalMs == null ? intervalMs : downIntervalMs,
          damping,
          windowFailures,
          failureWindowMs);
    }
  }
}
