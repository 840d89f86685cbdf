package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventRecorderTest {
  private final List<Event> sent = new ArrayList<>();
  private final EventRecorder recorder = new EventRecorder(sent::add, "vigil", 3, 60_000);

  private static ObjectReference pool(String name) {
    return new ObjectReferenceBuilder()
        .withApiVersion("vigil.dev/v1alpha1")
        .withKind("BackendPool")
        .withNamespace("shop")
        .withName(name)
        .build();
  }

  @Test
  void aggregatesAZoneOutageIntoOneEventPerReason() {
    for (int i = 0; i < 500; i++) {
      recorder.record(
          pool("web"), EventReason.BackendDown, "10.0.0." + i, "3 failed probes: timeout");
    }
    recorder.record(pool("web"), EventReason.PanicEntered, null, "1/501 available");

    assertThat(recorder.flush(1_000)).isEqualTo(2);

    assertThat(sent).extracting(Event::getReason).containsExactly("BackendDown", "PanicEntered");
    Event down = sent.get(0);
    assertThat(down.getCount()).isEqualTo(500);
    assertThat(down.getType()).isEqualTo("Warning");
    assertThat(down.getMessage())
        .startsWith("500 backends: 10.0.0.0 (3 failed probes: timeout)")
        .endsWith("and 490 more");
    assertThat(down.getInvolvedObject().getName()).isEqualTo("web");
    assertThat(down.getMetadata().getNamespace()).isEqualTo("shop");
  }

  @Test
  void rateLimitsPerPoolAndReportsWhatItHeldBack() {
    EventReason[] reasons = {
      EventReason.BackendDown,
      EventReason.BackendUp,
      EventReason.BackendEjected,
      EventReason.EjectionRefused,
      EventReason.PanicEntered
    };
    for (EventReason r : reasons) {
      recorder.record(pool("web"), r, "10.0.0.1", "x");
    }
    recorder.record(pool("other"), EventReason.BackendDown, "10.0.1.1", "x");

    recorder.flush(1_000);
    assertThat(sent).hasSize(4);
    assertThat(sent).filteredOn(e -> e.getInvolvedObject().getName().equals("web")).hasSize(3);

    recorder.record(pool("web"), EventReason.BackendUp, "10.0.0.1", "2 passed probes");
    recorder.flush(61_001);
    assertThat(sent).hasSize(5);
    assertThat(sent.get(4).getMessage()).contains("2 earlier transitions not reported");
  }

  @Test
  void countsDistinctBackendsNotRecords() {
    for (int i = 0; i < 10; i++) {
      recorder.record(
          pool("web"), EventReason.EjectionRefused, "web-00005", "cap 10% reached, try " + i);
    }
    recorder.record(pool("web"), EventReason.EjectionRefused, "web-00007", "cap 10% reached");

    recorder.flush(1_000);

    assertThat(sent).hasSize(1);
    assertThat(sent.get(0).getMessage())
        .isEqualTo(
            "2 backends: web-00005 (cap 10% reached, try 9, 10 times), web-00007 (cap 10% reached)");
    assertThat(sent.get(0).getCount()).isEqualTo(11);
  }

  @Test
  void oneBackendRecordedManyTimesIsOneBackend() {
    for (int i = 0; i < 10; i++) {
      recorder.record(pool("web"), EventReason.EjectionRefused, "web-00005", "cap reached");
    }

    recorder.flush(1_000);

    assertThat(sent.get(0).getMessage()).isEqualTo("web-00005: cap reached (10 times)");
  }

  @Test
  void theNamedListStopsAtTenDistinctBackends() {
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 12; i++) {
        recorder.record(pool("web"), EventReason.BackendDown, "b" + i, "timeout");
      }
    }

    recorder.flush(1_000);

    String message = sent.get(0).getMessage();
    assertThat(message).startsWith("12 backends: b0 (timeout, 3 times)").endsWith("and 2 more");
    assertThat(message.split("b0 ", -1)).hasSize(2);
  }

  @Test
  void emitsNothingWhenNothingWasRecorded() {
    assertThat(recorder.flush(1_000)).isZero();
    assertThat(sent).isEmpty();
  }

  @Test
  void repeatsAreCountedIntoOneEventWithoutQueueingEach() {
    recorder.record(pool("web"), EventReason.EjectionRefused, "web-1", "5 consecutive errors");
    for (int i = 0; i < 10_000; i++) {
      recorder.repeat(pool("web"), EventReason.EjectionRefused, "web-1", "refused again");
    }
    assertThat(recorder.queued()).as("one record queued, the repeats only counted").isEqualTo(1);

    recorder.flush(1_000);
    assertThat(sent).hasSize(1);
    assertThat(sent.get(0).getCount()).isEqualTo(10_001);
    assertThat(sent.get(0).getMessage()).isEqualTo("web-1: refused again (10001 times)");

    recorder.repeat(pool("web"), EventReason.EjectionRefused, "web-1", "refused again");
    recorder.flush(2_000);
    assertThat(sent.get(1).getMessage()).isEqualTo("web-1: refused again");
    assertThat(recorder.flush(3_000)).as("a repeat is reported once").isZero();
  }

  @Test
  void forgetsTheBudgetOfADeletedPoolAtTheNextFlush() {
    recorder.record(pool("web"), EventReason.BackendDown, "web-1", "x");
    recorder.record(pool("other"), EventReason.BackendDown, "other-1", "x");
    recorder.flush(1_000);
    assertThat(recorder.pools()).isEqualTo(2);

    recorder.record(pool("web"), EventReason.BackendUp, "web-1", "last words");
    recorder.forget("shop", "web");
    recorder.flush(2_000);

    assertThat(sent).extracting(Event::getMessage).contains("web-1: last words");
    assertThat(recorder.pools()).isEqualTo(1);
  }
}
