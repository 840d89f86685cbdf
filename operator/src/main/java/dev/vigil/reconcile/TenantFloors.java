package dev.vigil.reconcile;

import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import java.util.function.Function;

/**
 * What the operator's admin sets and a namespace's HealthPolicy cannot go under (issue 31), from
 * the flags {@code --min-interval}, {@code --default-damping} and {@code --probe-tls-secrets}.
 *
 * @param minIntervalMs a policy's {@code active.interval}, {@code fastInterval} and {@code
 *     downInterval} are raised to this when below it (the probes of one backend never come more
 *     often); at least the CRD's own minimum, 100 ms
 * @param defaultDamping flap damping with the CRD's default parameters for every policy without a
 *     {@code damping} block (a policy's own block still wins)
 * @param probeTlsSecrets policies may take a client certificate from a Secret labelled {@code
 *     vigil.dev/probe-tls=true} ({@code --probe-tls-secrets}, default true); false: Vigil reads no
 *     Secret, and a policy naming one is refused naming the field
 */
public record TenantFloors(long minIntervalMs, boolean defaultDamping, boolean probeTlsSecrets) {
  /** No floor beyond the CRD's own rules. */
  public static final TenantFloors NONE = new TenantFloors(HealthSettings.MIN_INTERVAL_MS, false);

  /** Secrets readable. */
  public TenantFloors(long minIntervalMs, boolean defaultDamping) {
    this(minIntervalMs, defaultDamping, true);
  }

  public TenantFloors {
    if (minIntervalMs < HealthSettings.MIN_INTERVAL_MS) {
      throw new IllegalArgumentException(
          "--min-interval must be at least "
              + HealthSettings.MIN_INTERVAL_MS
              + "ms (the CRD's own minimum), got "
              + minIntervalMs
              + "ms");
    }
  }

  /**
   * @param get a flag's value by name (without {@code --}), or null when not given
   */
  public static TenantFloors parse(Function<String, String> get) {
    String interval = get.apply("min-interval");
    String damping = get.apply("default-damping");
    long minMs;
    try {
      minMs =
          interval == null
              ? HealthSettings.MIN_INTERVAL_MS
              : Durations.millis("--min-interval", interval);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "--min-interval must be a duration such as 1s or 500ms, got " + interval, e);
    }
    if (damping != null && !damping.equals("true") && !damping.equals("false")) {
      throw new IllegalArgumentException("--default-damping must be true or false, got " + damping);
    }
    String secrets = get.apply("probe-tls-secrets");
    if (secrets != null && !secrets.equals("true") && !secrets.equals("false")) {
      throw new IllegalArgumentException(
          "--probe-tls-secrets must be true or false, got " + secrets);
    }
    return new TenantFloors(minMs, "true".equals(damping), !"false".equals(secrets));
  }

  /** {@code ms} raised to the floor. */
  long interval(long ms) {
    return Math.max(ms, minIntervalMs);
  }

  /** The damping of a policy whose own block resolved to {@code own} (null: none). */
  DampingSettings damping(DampingSettings own) {
    return own != null || !defaultDamping ? own : DampingSettings.defaults();
  }
}
