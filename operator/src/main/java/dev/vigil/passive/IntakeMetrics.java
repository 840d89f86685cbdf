package dev.vigil.passive;

import dev.vigil.health.EjectionDecision;
import dev.vigil.runtime.PoolKey;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * The intake's metrics:
 *
 * <ul>
 *   <li>{@code vigil_outcomes_received_total}: items in batches that parsed
 *   <li>{@code vigil_outcomes_accepted_total{namespace,pool}}: outcomes fed to a pool
 *   <li>{@code vigil_outcomes_rejected_total{reason}}: outcomes not taken, by {@link RejectReason}
 *   <li>{@code vigil_outcome_queue_overflow_total{namespace,pool}}: outcomes refused because the
 *       pool's queue was full (also counted as rejected, reason {@code queue_full})
 *   <li>{@code vigil_outcome_requests_total{code}}: requests by HTTP status of the reply
 *   <li>{@code vigil_outcome_ejections_total{namespace,pool,decision}}: reported outcomes that
 *       ejected a backend ({@code ejected}), were refused by the cap ({@code refused}) or would
 *       have ejected in a dry run ({@code would_eject}). No {@code backend} label: Pod names change
 *       with every rollout and a counter series is never removed; which backend is out is the
 *       bounded per-backend gauge's and the pool status's job
 *   <li>{@code vigil_outcome_connections_refused_total}: connections closed at once because the
 *       intake had {@code maxConnections} open, or their address {@code maxConnectionsPerSource}
 *   <li>{@code vigil_outcome_connections_timed_out_total{phase}}: connections closed because no
 *       whole request head came in time ({@code header}) or the answer did not finish ({@code
 *       request})
 * </ul>
 */
final class IntakeMetrics {
  private final MeterRegistry meters;
  private final Counter received;
  private final Map<RejectReason, Counter> rejected = new EnumMap<>(RejectReason.class);

  IntakeMetrics(MeterRegistry meters) {
    this.meters = meters;
    this.received = meters.counter("vigil_outcomes_received_total");
    for (RejectReason r : RejectReason.values()) {
      rejected.put(r, meters.counter("vigil_outcomes_rejected_total", "reason", r.wire()));
    }
  }

  void received(int n) {
    received.increment(n);
  }

  void accepted(PoolKey pool, int n) {
    if (n > 0) {
      meters
          .counter(
              "vigil_outcomes_accepted_total", "namespace", pool.namespace(), "pool", pool.name())
          .increment(n);
    }
  }

  void rejected(RejectReason reason, int n) {
    if (n > 0) {
      rejected.get(reason).increment(n);
    }
  }

  void overflow(PoolKey pool, int n) {
    meters
        .counter(
            "vigil_outcome_queue_overflow_total",
            "namespace",
            pool.namespace(),
            "pool",
            pool.name())
        .increment(n);
  }

  void request(int status) {
    meters.counter("vigil_outcome_requests_total", "code", Integer.toString(status)).increment();
  }

  void connectionClosed(dev.vigil.security.ConnectionGate.CloseReason why) {
    switch (why) {
      case TOO_MANY_CONNECTIONS, TOO_MANY_FROM_SOURCE ->
          meters.counter("vigil_outcome_connections_refused_total").increment();
      case HEADER_TIMEOUT ->
          meters
              .counter("vigil_outcome_connections_timed_out_total", "phase", "header")
              .increment();
      case REQUEST_TIMEOUT ->
          meters
              .counter("vigil_outcome_connections_timed_out_total", "phase", "request")
              .increment();
    }
  }

  void decided(PoolKey pool, EjectionDecision.Kind kind) {
    String decision =
        switch (kind) {
          case EJECTED -> "ejected";
          case REFUSED_BY_CAP -> "refused";
          default -> kind.name().toLowerCase(Locale.ROOT);
        };
    meters
        .counter(
            "vigil_outcome_ejections_total",
            "namespace",
            pool.namespace(),
            "pool",
            pool.name(),
            "decision",
            decision)
        .increment();
  }
}
