package dev.vigil.passive;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;

/**
 * The metrics of routing outcomes between replicas (docs/metrics.md): what this replica forwarded
 * and what came of it, and, as an owner, the repeats it answered from memory.
 */
final class RouteMetrics {
  private final Counter forwarded;
  private final Counter forwards;
  private final Counter retried;
  private final Counter dedupHits;
  private final Counter repeats;
  private final Counter notDelivered;
  private final Counter unconfirmed;
  private final Counter received;

  RouteMetrics(MeterRegistry meters, Supplier<Number> bytesInFlight) {
    forwarded =
        Counter.builder("vigil_outcomes_forwarded_total")
            .description(
                "Outcomes this replica took and another replica (the pool's owner) applied")
            .register(meters);
    forwards =
        Counter.builder("vigil_outcome_forwards_total")
            .description("Forwards (batches of parts, each one pool's outcomes) sent to owners")
            .register(meters);
    retried =
        Counter.builder("vigil_outcome_forward_retries_total")
            .description(
                "Tries of a delivery beyond its first (the pool moved, its owner did not answer)")
            .register(meters);
    dedupHits =
        Counter.builder("vigil_outcome_forward_dedup_hits_total")
            .description("Forwarded parts this owner had taken before, answered from memory")
            .register(meters);
    repeats =
        Counter.builder("vigil_outcome_repeats_total")
            .description(
                "Reporters' batches sent again under an Idempotency-Key this owner had applied"
                    + " (or whose ejection it restored from status), not applied again")
            .register(meters);
    received =
        Counter.builder("vigil_outcomes_forwarded_in_total")
            .description("Outcomes other replicas forwarded to this one that it applied")
            .register(meters);
    notDelivered = failed(meters, "not_delivered");
    unconfirmed = failed(meters, "unconfirmed");
    Gauge.builder("vigil_outcome_forward_bytes_in_flight", bytesInFlight)
        .description("Bytes (estimated) of forwarded outcomes waiting for their owners' answers")
        .register(meters);
  }

  private static Counter failed(MeterRegistry meters, String reason) {
    return Counter.builder("vigil_outcome_forward_failed_total")
        .description(
            "Outcomes not delivered to their pool's owner: not_delivered (nothing applied, the"
                + " reporter retries) or unconfirmed (the owner may have applied them)")
        .tag("reason", reason)
        .register(meters);
  }

  void forwarded(int outcomes) {
    forwarded.increment(outcomes);
  }

  void forward() {
    forwards.increment();
  }

  void retried() {
    retried.increment();
  }

  /**
   * A repeat not applied again: a reporter's (under its idempotency key: answered from memory, or
   * known to the pool from the ejection it made) or a forward's.
   */
  void dedupHit(boolean reporters) {
    (reporters ? repeats : dedupHits).increment();
  }

  void received(int outcomes) {
    received.increment(outcomes);
  }

  void notDelivered(int outcomes) {
    notDelivered.increment(outcomes);
  }

  void unconfirmed(int outcomes) {
    unconfirmed.increment(outcomes);
  }
}
