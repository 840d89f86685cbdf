package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.TransitionSink;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports a pool's transitions three ways: one log line each, a Kubernetes Event (aggregated and
 * rate-limited by the {@link EventRecorder}), and a metric.
 */
public final class TransitionReporter implements TransitionSink {
  private static final Logger LOG = LoggerFactory.getLogger("dev.vigil.transitions");

  private final EventRecorder events;
  private final MeterRegistry meters;

  public TransitionReporter(EventRecorder events, MeterRegistry meters) {
    this.events = events;
    this.meters = meters;
  }

  static ObjectReference reference(PoolKey pool) {
    return new ObjectReferenceBuilder()
        .withApiVersion(HealthPolicy.GROUP + "/" + HealthPolicy.VERSION)
        .withKind("BackendPool")
        .withNamespace(pool.namespace())
        .withName(pool.name())
        .build();
  }

  @Override
  public void stateChanged(PoolKey pool, String backend, String from, String to, String reason) {
    LOG.info(
        "transition pool={} backend={} from={} to={} reason=\"{}\"",
        pool,
        backend,
        from,
        to,
        reason);
    meters
        .counter(
            "vigil_transitions_total", "namespace", pool.namespace(), "pool", pool.name(), "to", to)
        .increment();
    if ("UP".equals(to) && !"UNKNOWN".equals(from)) {
      events.record(reference(pool), EventReason.BackendUp, backend, reason);
    } else if ("DOWN".equals(to)) {
      events.record(reference(pool), EventReason.BackendDown, backend, reason);
    }
  }

  @Override
  public void ejected(PoolKey pool, String backend, long untilMs, String why) {
    LOG.info(
        "transition pool={} backend={} to=EJECTED until={} reason=\"{}\"",
        pool,
        backend,
        Instant.ofEpochMilli(untilMs),
        why);
    meters
        .counter("vigil_ejections_total", "namespace", pool.namespace(), "pool", pool.name())
        .increment();
    events.record(
        reference(pool),
        EventReason.BackendEjected,
        backend,
        why + ", ejected until " + Instant.ofEpochMilli(untilMs));
  }

  @Override
  public void ejectionRefused(PoolKey pool, String backend, String why) {
    LOG.info("ejection-refused pool={} backend={} reason=\"{}\"", pool, backend, why);
    meters
        .counter(
            "vigil_ejections_refused_total", "namespace", pool.namespace(), "pool", pool.name())
        .increment();
    events.record(
        reference(pool),
        EventReason.EjectionRefused,
        backend,
        why + ", but ejecting would exceed passive.maxEjectionPercent");
  }

  @Override
  public void wouldEject(PoolKey pool, String backend, String why) {
    LOG.info("would-eject pool={} backend={} reason=\"{}\" (dry run)", pool, backend, why);
    meters
        .counter(
            "vigil_ejections_dry_run_total", "namespace", pool.namespace(), "pool", pool.name())
        .increment();
    events.record(
        reference(pool), EventReason.WouldEject, backend, why + " (dry run: not ejected)");
  }

  @Override
  public void panicChanged(PoolKey pool, boolean panic, AvailabilitySnapshot.Counts counts) {
    String message =
        counts.available()
            + " of "
            + counts.decided()
            + " decided backends available"
            + (panic ? ": publishing every decided backend" : "");
    LOG.info("panic pool={} panic={} {}", pool, panic, message);
    events.record(
        reference(pool), panic ? EventReason.PanicEntered : EventReason.PanicExited, null, message);
  }
}
