package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.NoProbes;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntimes;
import io.fabric8.kubernetes.api.model.Event;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Transitions as Events and metrics: repeated refusals stay cheap, deleted pools are forgotten. */
class TransitionReporterTest {
  private final List<Event> sent = new ArrayList<>();
  private final EventRecorder events = new EventRecorder(sent::add, "vigil", 10, 60_000);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final TransitionReporter reporter = new TransitionReporter(events, meters);
  private final PoolKey web = new PoolKey("shop", "web");
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void everyRefusalIsCountedAndTheirRunIsOneEvent() {
    reporter.ejectionRefused(web, "web-1", "5 consecutive errors");
    for (int i = 0; i < 999; i++) {
      reporter.ejectionRefusedAgain(web, "web-1");
    }

    assertThat(
            meters.counter(TransitionReporter.REFUSED, "namespace", "shop", "pool", "web").count())
        .isEqualTo(1_000);
    assertThat(events.queued()).isEqualTo(1);
    events.flush(1_000);
    assertThat(sent).hasSize(1);
    assertThat(sent.get(0).getReason()).isEqualTo("EjectionRefused");
    assertThat(sent.get(0).getCount()).isEqualTo(1_000);
  }

  /** Ejection and damping, entered and left: each one Event of its reason and one count. */
  @Test
  void ejectionAndDampingAreEachAnEventAndACount() {
    reporter.ejected(web, "web-1", 1_700_000_000_000L, "5 consecutive errors");
    reporter.unejected(web, "web-1", "ejection ended");
    reporter.damped(web, "web-2", 1_700_000_060_000L, "flapped 4 times");
    reporter.released(web, "web-2", "merit decayed to 700");
    events.flush(1_000);

    assertThat(sent)
        .extracting(Event::getReason, Event::getMessage)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(
                "BackendEjected",
                "web-1: 5 consecutive errors, ejected until 2023-11-14T22:13:20Z"),
            org.assertj.core.groups.Tuple.tuple("BackendUnejected", "web-1: ejection ended"),
            org.assertj.core.groups.Tuple.tuple(
                "BackendDamped", "web-2: flapped 4 times, damped until 2023-11-14T22:14:20Z"),
            org.assertj.core.groups.Tuple.tuple("BackendReleased", "web-2: merit decayed to 700"));
    for (String counter :
        List.of(
            TransitionReporter.EJECTIONS,
            TransitionReporter.UNEJECTIONS,
            TransitionReporter.DAMPINGS,
            TransitionReporter.RELEASES)) {
      assertThat(meters.counter(counter, "namespace", "shop", "pool", "web").count())
          .as(counter)
          .isEqualTo(1);
    }
  }

  @Test
  void aClosedPoolsEventBudgetIsForgotten() throws Exception {
    PoolRuntimes runtimes =
        new PoolRuntimes(vertx, (context, callback) -> new NoProbes(), reporter, () -> 0L);
    runtimes.ensure(web, HealthSettings.builder().build());
    reporter.stateChanged(web, "web-1", "UP", "DOWN", "3 probes failed: timeout");
    events.flush(1_000);
    assertThat(events.pools()).isEqualTo(1);

    runtimes.close(web).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    events.flush(2_000);

    assertThat(events.pools()).as("budgets kept after the pool was deleted").isZero();
  }
}
