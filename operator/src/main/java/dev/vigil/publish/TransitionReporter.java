package dev.vigil.publish;

import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.TransitionSink;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Reports a pool's transitions three ways: one log line each, a Kubernetes Event (aggregated and
 * rate-limited by the {@link EventRecorder}), and a metric. Log lines carry their fields twice: in
 * the text ({@code pool=... backend=... from=... to=... reason=...}) and as SLF4J key-value pairs,
 * which JSON logs render as fields.
 */
public final class TransitionReporter implements TransitionSink {
  private static final Logger LOG = LoggerFactory.getLogger("dev.vigil.transitions");

  public static final String TRANSITIONS = "vigil_transitions_total";
  public static final String EJECTIONS = "vigil_ejections_total";
  public static final String UNEJECTIONS = "vigil_unejections_total";
  public static final String REFUSED = "vigil_ejections_refused_total";
  public static final String DRY_RUN = "vigil_ejections_dry_run_total";
  public static final String PANIC_TRANSITIONS = "vigil_panic_transitions_total";
  public static final String DAMPINGS = "vigil_dampings_total";
  public static final String RELEASES = "vigil_damping_releases_total";

  private final EventRecorder events;
  private final MeterRegistry meters;
  private final PoolSeries series;

  /**
   * @param meters the operator's registry; every series in it tagged with a pool (these, the
   *     intake's, the pool gauges') is removed when that pool's runtime closes ({@link PoolSeries})
   */
  public TransitionReporter(EventRecorder events, MeterRegistry meters) {
    this.events = events;
    this.meters = meters;
    this.series = new PoolSeries(meters);
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
    log(pool, backend, from, to, reason)
        .log(
            "transition pool={} backend={} from={} to={} reason=\"{}\"",
            pool,
            backend,
            from,
            to,
            reason);
    meters
        .counter(
            TRANSITIONS,
            "namespace",
            pool.namespace(),
            "pool",
            pool.name(),
            "from",
            from.toLowerCase(Locale.ROOT),
            "to",
            to.toLowerCase(Locale.ROOT))
        .increment();
    if ("UP".equals(to) && !"UNKNOWN".equals(from)) {
      events.record(reference(pool), EventReason.BackendUp, backend, reason);
    } else if ("DOWN".equals(to)) {
      events.record(reference(pool), EventReason.BackendDown, backend, reason);
    }
  }

  @Override
  public void ejected(PoolKey pool, String backend, long untilMs, String why) {
    entered(pool, backend, "EJECTED", untilMs, why, EJECTIONS, EventReason.BackendEjected);
  }

  @Override
  public void unejected(PoolKey pool, String backend, String why) {
    left(pool, backend, "EJECTED", why, UNEJECTIONS, EventReason.BackendUnejected);
  }

  @Override
  public void damped(PoolKey pool, String backend, long untilMs, String why) {
    entered(pool, backend, "DAMPED", untilMs, why, DAMPINGS, EventReason.BackendDamped);
  }

  @Override
  public void released(PoolKey pool, String backend, String why) {
    left(pool, backend, "DAMPED", why, RELEASES, EventReason.BackendReleased);
  }

  /** A state entered until a time (ejected, damped): a log line, a counter, an Event. */
  private void entered(
      PoolKey pool,
      String backend,
      String state,
      long untilMs,
      String why,
      String counter,
      EventReason reason) {
    Instant until = Instant.ofEpochMilli(untilMs);
    log(pool, backend, "NOT_" + state, state, why)
        .addKeyValue("until", until.toString())
        .log(
            "transition pool={} backend={} to={} until={} reason=\"{}\"",
            pool,
            backend,
            state,
            until,
            why);
    counter(counter, pool).increment();
    events.record(
        reference(pool),
        reason,
        backend,
        why + ", " + state.toLowerCase(Locale.ROOT) + " until " + until);
  }

  /** That state left: a log line, a counter, an Event. */
  private void left(
      PoolKey pool, String backend, String state, String why, String counter, EventReason reason) {
    log(pool, backend, state, "NOT_" + state, why)
        .log("transition pool={} backend={} from={} reason=\"{}\"", pool, backend, state, why);
    counter(counter, pool).increment();
    events.record(reference(pool), reason, backend, why);
  }

  @Override
  public void ejectionRefused(PoolKey pool, String backend, String why) {
    log(pool, backend, "NOT_EJECTED", "NOT_EJECTED", why)
        .addKeyValue("refused", "passive.maxEjectionPercent")
        .log("ejection-refused pool={} backend={} reason=\"{}\"", pool, backend, why);
    counter(REFUSED, pool).increment();
    events.record(
        reference(pool),
        EventReason.EjectionRefused,
        backend,
        why + ", but ejecting would exceed passive.maxEjectionPercent");
  }

  /** Counted, and into the pool's next EjectionRefused Event; no log line, no queued record. */
  @Override
  public void ejectionRefusedAgain(PoolKey pool, String backend) {
    counter(REFUSED, pool).increment();
    events.repeat(
        reference(pool),
        EventReason.EjectionRefused,
        backend,
        "ejection refused again: it would still exceed passive.maxEjectionPercent");
  }

  /**
   * A pool's runtime closed (deleted, moved to another shard, or this replica stopped leading):
   * forget its Event budget and remove its metric series.
   */
  @Override
  public void poolClosed(PoolKey pool) {
    events.forget(pool.namespace(), pool.name());
    series.remove(pool);
  }

  /** A Down the voters did not confirm: logged and an Event; the backend stays Up. */
  @Override
  public void downNotConfirmed(PoolKey pool, String backend, String why) {
    log(pool, backend, "UP", "UP", why)
        .log("down-not-confirmed pool={} backend={} reason=\"{}\"", pool, backend, why);
    events.record(
        reference(pool),
        EventReason.DownNotConfirmed,
        backend,
        "this checker saw it fail, but it stays Up: " + why);
  }

  /** A Down a lone Suspect owner held back: logged and an Event; the backend stays Up. */
  @Override
  public void downHeld(PoolKey pool, String backend, String why) {
    log(pool, backend, "UP", "UP", why)
        .log("down-held pool={} backend={} reason=\"{}\"", pool, backend, why);
    events.record(reference(pool), EventReason.DownHeld, backend, "Down held back: " + why);
  }

  @Override
  public void wouldEject(PoolKey pool, String backend, String why) {
    log(pool, backend, "NOT_EJECTED", "NOT_EJECTED", why)
        .addKeyValue("dryRun", true)
        .log("would-eject pool={} backend={} reason=\"{}\" (dry run)", pool, backend, why);
    counter(DRY_RUN, pool).increment();
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
    LOG.atInfo()
        .addKeyValue("pool", pool.toString())
        .addKeyValue("panic", panic)
        .addKeyValue("available", counts.available())
        .addKeyValue("decided", counts.decided())
        .log("panic pool={} panic={} {}", pool, panic, message);
    meters
        .counter(
            PANIC_TRANSITIONS,
            "namespace",
            pool.namespace(),
            "pool",
            pool.name(),
            "to",
            panic ? "entered" : "exited")
        .increment();
    events.record(
        reference(pool), panic ? EventReason.PanicEntered : EventReason.PanicExited, null, message);
  }

  /** A log line with the transition's fields as key-value pairs (JSON logs show them as fields). */
  private static LoggingEventBuilder log(
      PoolKey pool, String backend, String from, String to, String reason) {
    return LOG.atInfo()
        .addKeyValue("pool", pool.toString())
        .addKeyValue("backend", backend)
        .addKeyValue("from", from)
        .addKeyValue("to", to)
        .addKeyValue("reason", reason);
  }

  private Counter counter(String name, PoolKey pool) {
    return meters.counter(name, "namespace", pool.namespace(), "pool", pool.name());
  }
}
