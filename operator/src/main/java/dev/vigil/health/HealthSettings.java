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
 * @param quorum {@code quorum} (checker quorum across zones, docs/design.md §8), or null (off: the
 *     owner decides alone unless it is Suspect, {@link #suspectQuorum()})
 * @param maxIntervalMs {@code active.maxInterval}: the probe budget (docs/design.md §9) never
 *     stretches an interval past this; at least the interval
 * @param quietMinRequests {@code active.quietMinRequests}: passive successes within {@code interval
 *     x 10}, with no failure, that make an Up backend {@code quiet} (stretched first under the
 *     probe budget); 0 = no backend is quiet
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
    DampingSettings damping,
    int windowFailures,
    long failureWindowMs,
    QuorumSettings quorum,
    long maxIntervalMs,
    int quietMinRequests) {

  /** {@code active.maxInterval} when the policy names none: ten intervals, at most 5 minutes. */
  public static long defaultMaxIntervalMs(long intervalMs) {
    return Math.max(intervalMs, Math.min(10 * intervalMs, 300_000));
  }

  /** {@code active.quietMinRequests} when the policy names none. */
  public static final int DEFAULT_QUIET_MIN_REQUESTS = 10;

  /** The smallest {@code active.interval} accepted. */
  public static final long MIN_INTERVAL_MS = 100;

  /** Checks every field; throws {@link InvalidSettingsException} naming the first bad one. */
  public HealthSettings {
    InvalidSettingsException.checkAtLeast("active.interval", intervalMs, MIN_INTERVAL_MS, "ms");
    InvalidSettingsException.checkAtLeast("active.timeout", timeoutMs, 1, "ms");
    if (timeoutMs >= intervalMs) {
      throw new InvalidSettingsException(
          "active.timeout",
          "must be below active.interval (" + intervalMs + "ms), was " + timeoutMs + "ms");
    }
    InvalidSettingsException.checkBetween("active.jitterPercent", jitterPercent, 0, 50);
    InvalidSettingsException.checkBetween("active.rise", rise, 1, 100);
    InvalidSettingsException.checkBetween("active.fall", fall, 1, 100);
    InvalidSettingsException.checkBetween("passive.consecutiveErrors", consecutiveErrors, 0, 1000);
    InvalidSettingsException.checkBetween(
        "passive.consecutiveLocalOriginErrors", consecutiveLocalOriginErrors, 0, 1000);
    InvalidSettingsException.checkAtLeast("passive.baseEjectionTime", baseEjectionTimeMs, 1, "ms");
    if (maxEjectionTimeMs < baseEjectionTimeMs) {
      throw new InvalidSettingsException(
          "passive.maxEjectionTime",
          "must be at least passive.baseEjectionTime ("
              + baseEjectionTimeMs
              + "ms), was "
              + maxEjectionTimeMs
              + "ms");
    }
    InvalidSettingsException.checkBetween("passive.maxEjectionPercent", maxEjectionPercent, 0, 100);
    InvalidSettingsException.checkAtLeast("passive.sweepInterval", sweepIntervalMs, 1, "ms");
    InvalidSettingsException.checkBetween("panicThresholdPercent", panicThresholdPercent, 0, 100);
    InvalidSettingsException.checkBetween(
        "panicExitPercent", panicExitPercent, panicThresholdPercent, 100);
    phaseInterval("active.fastInterval", fastIntervalMs, timeoutMs);
    phaseInterval("active.downInterval", downIntervalMs, timeoutMs);
    InvalidSettingsException.checkBetween("passive.windowFailures", windowFailures, 0, 1000);
    InvalidSettingsException.checkAtLeast("passive.failureWindow", failureWindowMs, 1, "ms");
    if (maxIntervalMs < intervalMs) {
      throw new InvalidSettingsException(
          "active.maxInterval",
          "must be at least active.interval (" + intervalMs + "ms), was " + maxIntervalMs + "ms");
    }
    InvalidSettingsException.checkBetween("active.quietMinRequests", quietMinRequests, 0, 100);
  }

  private static void phaseInterval(String field, long ms, long timeoutMs) {
    InvalidSettingsException.checkAtLeast(field, ms, MIN_INTERVAL_MS, "ms");
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

  public static HealthSettingsBuilder builder() {
    return new HealthSettingsBuilder();
  }

  /** A builder holding these values, to change a few. */
  public HealthSettingsBuilder toBuilder() {
    return new HealthSettingsBuilder()
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
        .failureWindowMs(failureWindowMs)
        .quorum(
            quorum == null ? null : quorum.confirmers(),
            quorum == null ? 0 : quorum.downPercent(),
            quorum == null || quorumTimeoutIsDefault() ? null : quorum.timeoutMs())
        .maxIntervalMs(maxIntervalMs == defaultMaxIntervalMs(intervalMs) ? null : maxIntervalMs)
        .quietMinRequests(quietMinRequests);
  }

  /** Whether the quorum's timeout is the one computed from these settings (so it follows them). */
  private boolean quorumTimeoutIsDefault() {
    return quorum.timeoutMs() == QuorumSettings.defaultTimeoutMs(intervalMs, fall, timeoutMs);
  }

  /** Whether the policy turns checker quorum on (it has a {@code quorum} block). */
  public boolean quorumOn() {
    return quorum != null;
  }

  /**
   * The quorum a Suspect owner applies (docs/design.md §8): the policy's own, or, when the policy
   * has none, every default with the timeout computed from these settings.
   */
  public QuorumSettings suspectQuorum() {
    return quorum != null ? quorum : QuorumSettings.defaults(intervalMs, fall, timeoutMs);
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
   * The bounds of what the two request-count rules share (the CRD's {@code RequestVolumeRule}):
   * {@code <rule>.minimumHosts} 1..10,000 and {@code <rule>.requestVolume} 1..1,000,000.
   */
  private static void checkRequestVolume(String rule, int minimumHosts, int requestVolume) {
    InvalidSettingsException.checkBetween(rule + ".minimumHosts", minimumHosts, 1, 10_000);
    InvalidSettingsException.checkBetween(rule + ".requestVolume", requestVolume, 1, 1_000_000);
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
      checkRequestVolume("passive.successRate", minimumHosts, requestVolume);
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
      InvalidSettingsException.checkBetween(
          "passive.failurePercentage.threshold", threshold, 0, 100);
      checkRequestVolume("passive.failurePercentage", minimumHosts, requestVolume);
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
      InvalidSettingsException.checkBetween(
          "passive.latency.minimumHosts", minimumHosts, 1, 10_000);
      InvalidSettingsException.checkBetween(
          "passive.latency.minimumSamples", minimumSamples, 1, 1_000_000);
      InvalidSettingsException.checkAtLeast("passive.latency.floor", floorMs, 0, "ms");
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
}
