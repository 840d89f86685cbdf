package dev.vigil.health;

import java.util.Objects;

/**
 * What a statistical rule did to one backend at a sweep, for Events, status and metrics.
 *
 * @param backendId the backend's id
 * @param rule the rule that flagged it
 * @param kind {@link EjectionDecision.Kind#EJECTED}, {@link EjectionDecision.Kind#REFUSED_BY_CAP}
 *     or {@link EjectionDecision.Kind#WOULD_EJECT} (dry run); never {@code NOT_NEEDED}
 * @param ejectedUntil the end of the ejection (epoch ms) when ejected, the end it would have had in
 *     a dry run, {@code -1} when refused
 * @param reason why, with the numbers: {@code success rate 62% < mean 97% - 1.9 x stdev 4% (...)}
 */
public record Ejection(
    String backendId, Rule rule, EjectionDecision.Kind kind, long ejectedUntil, String reason) {

  /** The statistical rules, in the order a sweep applies them (Envoy's order for the first two). */
  public enum Rule {
    /** {@code passive.failurePercentage}. */
    FAILURE_PERCENTAGE,
    /** {@code passive.successRate}. */
    SUCCESS_RATE,
    /** {@code passive.latency}. */
    LATENCY
  }

  public Ejection {
    Objects.requireNonNull(backendId, "backendId");
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(reason, "reason");
    if (kind == EjectionDecision.Kind.NOT_NEEDED) {
      throw new IllegalArgumentException("an Ejection is never NOT_NEEDED");
    }
  }

  /** A dry run: the rule would have ejected the backend; nobody was. */
  public boolean dryRun() {
    return kind == EjectionDecision.Kind.WOULD_EJECT;
  }
}
