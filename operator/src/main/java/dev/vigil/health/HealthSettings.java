package dev.vigil.health;

/**
 * The decision-relevant part of a {@code HealthPolicy}, resolved once: defaults applied (DESIGN
 * §1), every value checked. Durations are milliseconds. Build one with {@link #builder()}; the
 * canonical constructor validates too, so no invalid instance can exist.
 *
 * <p>Statistical outlier detection ({@code passive.successRate}, {@code passive.failurePercentage},
 * {@code passive.latency}, each with its own {@code enforce}) is not here yet: a later issue adds
 * it as nested records after {@code enforce}, with their own validation in the constructor and
 * builder setters.
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
 * @param panicThresholdPercent {@code panicThresholdPercent}: enter panic below this share; 0 = off
 * @param panicExitPercent {@code panicExitPercent}: leave panic at or above this share
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
    int panicThresholdPercent,
    int panicExitPercent) {

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
  }

  /** DESIGN §1 defaults throughout. */
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
        .panicThresholdPercent(panicThresholdPercent)
        .panicExitPercent(panicExitPercent == panicThresholdPercent ? null : panicExitPercent);
  }

  /** Whether panic is on at all ({@code panicThresholdPercent} above 0). */
  public boolean panicEnabled() {
    return panicThresholdPercent > 0;
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

  /** Starts from DESIGN §1 defaults; {@link #build()} validates. */
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
    private int panicThresholdPercent = 50;
    private Integer panicExitPercent; // null: equal to the threshold

    private Builder() {}

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
          panicThresholdPercent,
          panicExitPercent == null ? panicThresholdPercent : panicExitPercent);
    }
  }
}
