package dev.vigil.health;

/**
 * Builds a {@link HealthSettings}: starts from docs/design.md §1 defaults; {@link #build()}
 * validates.
 */
public final class HealthSettingsBuilder {
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
  private HealthSettings.SuccessRate successRate;
  private HealthSettings.FailurePercentage failurePercentage;
  private HealthSettings.Latency latency;
  private int panicThresholdPercent = 50;
  private Integer panicExitPercent; // null: equal to the threshold
  private Long fastIntervalMs; // null: equal to the interval
  private Long downIntervalMs; // null: equal to the interval
  private DampingSettings damping;
  private int windowFailures = 0;
  private long failureWindowMs = 10_000;
  private Integer quorumConfirmers; // null: quorum off
  private int quorumDownPercent;
  private Long quorumTimeoutMs; // null: computed at build()
  private Long maxIntervalMs; // null: HealthSettings.defaultMaxIntervalMs
  private int quietMinRequests = HealthSettings.DEFAULT_QUIET_MIN_REQUESTS;

  HealthSettingsBuilder() {}

  /** {@code passive.windowFailures}; 0 (the default) turns the rule off. */
  public HealthSettingsBuilder windowFailures(int v) {
    windowFailures = v;
    return this;
  }

  /** {@code passive.failureWindow} in ms (default 10 s). */
  public HealthSettingsBuilder failureWindowMs(long v) {
    failureWindowMs = v;
    return this;
  }

  /** {@code active.fastInterval}; null (the default) means equal to the interval. */
  public HealthSettingsBuilder fastIntervalMs(Long v) {
    fastIntervalMs = v;
    return this;
  }

  /** {@code active.maxInterval}; null (the default) means ten intervals, at most 5 minutes. */
  public HealthSettingsBuilder maxIntervalMs(Long v) {
    maxIntervalMs = v;
    return this;
  }

  /** {@code active.quietMinRequests} (default 10; 0: no backend is quiet). */
  public HealthSettingsBuilder quietMinRequests(int v) {
    quietMinRequests = v;
    return this;
  }

  /** {@code active.downInterval}; null (the default) means equal to the interval. */
  public HealthSettingsBuilder downIntervalMs(Long v) {
    downIntervalMs = v;
    return this;
  }

  /** {@code quorum} with every value given; null (the default) turns checker quorum off. */
  public HealthSettingsBuilder quorum(QuorumSettings v) {
    return v == null
        ? quorum(null, 0, null)
        : quorum(v.confirmers(), v.downPercent(), v.timeoutMs());
  }

  /**
   * {@code quorum}, checked at {@link #build()} as every other value.
   *
   * @param confirmers null turns checker quorum off
   * @param timeoutMs null: computed at {@link #build()} from the interval, fall and probe timeout
   *     the builder then holds ({@link QuorumSettings#defaultTimeoutMs})
   */
  public HealthSettingsBuilder quorum(Integer confirmers, int downPercent, Long timeoutMs) {
    quorumConfirmers = confirmers;
    quorumDownPercent = downPercent;
    quorumTimeoutMs = timeoutMs;
    return this;
  }

  /** {@code damping}; null (the default) turns flap damping off. */
  public HealthSettingsBuilder damping(DampingSettings v) {
    damping = v;
    return this;
  }

  public HealthSettingsBuilder intervalMs(long v) {
    intervalMs = v;
    return this;
  }

  public HealthSettingsBuilder timeoutMs(long v) {
    timeoutMs = v;
    return this;
  }

  public HealthSettingsBuilder jitterPercent(int v) {
    jitterPercent = v;
    return this;
  }

  public HealthSettingsBuilder rise(int v) {
    rise = v;
    return this;
  }

  public HealthSettingsBuilder fall(int v) {
    fall = v;
    return this;
  }

  public HealthSettingsBuilder consecutiveErrors(int v) {
    consecutiveErrors = v;
    return this;
  }

  public HealthSettingsBuilder consecutiveLocalOriginErrors(int v) {
    consecutiveLocalOriginErrors = v;
    return this;
  }

  public HealthSettingsBuilder splitLocalOrigin(boolean v) {
    splitLocalOrigin = v;
    return this;
  }

  public HealthSettingsBuilder baseEjectionTimeMs(long v) {
    baseEjectionTimeMs = v;
    return this;
  }

  public HealthSettingsBuilder maxEjectionTimeMs(long v) {
    maxEjectionTimeMs = v;
    return this;
  }

  public HealthSettingsBuilder maxEjectionPercent(int v) {
    maxEjectionPercent = v;
    return this;
  }

  public HealthSettingsBuilder alwaysEjectOne(boolean v) {
    alwaysEjectOne = v;
    return this;
  }

  public HealthSettingsBuilder sweepIntervalMs(long v) {
    sweepIntervalMs = v;
    return this;
  }

  public HealthSettingsBuilder unejectOnActivePass(boolean v) {
    unejectOnActivePass = v;
    return this;
  }

  public HealthSettingsBuilder enforce(boolean v) {
    enforce = v;
    return this;
  }

  /** {@code passive.successRate}; null (the default) turns the rule off. */
  public HealthSettingsBuilder successRate(HealthSettings.SuccessRate v) {
    successRate = v;
    return this;
  }

  /** {@code passive.failurePercentage}; null (the default) turns the rule off. */
  public HealthSettingsBuilder failurePercentage(HealthSettings.FailurePercentage v) {
    failurePercentage = v;
    return this;
  }

  /** {@code passive.latency}; null (the default) turns the rule off. */
  public HealthSettingsBuilder latency(HealthSettings.Latency v) {
    latency = v;
    return this;
  }

  public HealthSettingsBuilder panicThresholdPercent(int v) {
    panicThresholdPercent = v;
    return this;
  }

  /** Leave panic only at or above this share; null (the default) means equal to the threshold. */
  public HealthSettingsBuilder panicExitPercent(Integer v) {
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
        failureWindowMs,
        quorum(),
        maxIntervalMs == null ? HealthSettings.defaultMaxIntervalMs(intervalMs) : maxIntervalMs,
        quietMinRequests);
  }

  private QuorumSettings quorum() {
    if (quorumConfirmers == null) {
      return null;
    }
    return new QuorumSettings(
        quorumConfirmers,
        quorumDownPercent,
        quorumTimeoutMs != null
            ? quorumTimeoutMs
            : QuorumSettings.defaultTimeoutMs(intervalMs, fall, timeoutMs));
  }
}
