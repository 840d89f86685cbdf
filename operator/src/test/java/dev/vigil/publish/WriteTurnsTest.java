package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Whose turn it is at the write budget: pure, so every order is exact. */
class WriteTurnsTest {
  private static final int SLICE = WriteBudget.Priority.SLICE.ordinal();
  private static final int STATUS = WriteBudget.Priority.STATUS.ordinal();
  private static final int EVENT = WriteBudget.Priority.EVENT.ordinal();

  /**
   * Tenant A's 20 flapping pools queued 5 slice writes each before tenant B's one: B's is the
   * second write served (one round of the two namespaces), whatever A queued.
   */
  @Test
  void oneTenantsQueueDelaysAnothersWriteByAtMostOneRound() {
    WriteTurns<String> turns = new WriteTurns<>(WriteBudget.Priority.values().length);
    for (int round = 0; round < 5; round++) {
      for (int pool = 0; pool < 20; pool++) {
        turns.add(SLICE, "tenant-a", "a-" + pool + "-" + round);
      }
    }
    turns.add(SLICE, "tenant-b", "b");

    List<String> served = drain(turns);

    assertThat(served).hasSize(101);
    assertThat(served.indexOf("b")).isLessThan(2);
  }

  @Test
  void namespacesTakeTurnsAndEachKeepsItsOwnOrder() {
    WriteTurns<String> turns = new WriteTurns<>(WriteBudget.Priority.values().length);
    turns.add(SLICE, "a", "a1");
    turns.add(SLICE, "a", "a2");
    turns.add(SLICE, "a", "a3");
    turns.add(SLICE, "b", "b1");
    turns.add(SLICE, "c", "c1");
    turns.add(SLICE, "b", "b2");

    assertThat(drain(turns)).containsExactly("a1", "b1", "c1", "a2", "b2", "a3");
  }

  @Test
  void aNamespaceThatMayNotGoKeepsItsPlaceAtTheFront() {
    WriteTurns<String> turns = new WriteTurns<>(1);
    turns.add(0, "a", "a1");
    turns.add(0, "a", "a2");
    turns.add(0, "b", "b1");
    turns.add(0, "b", "b2");

    assertThat(turns.poll(ns -> !ns.equals("a"))).isEqualTo("b1");
    assertThat(turns.poll(ns -> !ns.equals("a"))).isEqualTo("b2");
    assertThat(turns.poll(ns -> !ns.equals("a"))).isNull();
    assertThat(turns.poll()).as("a kept its turn").isEqualTo("a1");
    assertThat(turns.size(0)).isEqualTo(1);
  }

  /** The budget's priority order holds across namespaces: slices, then status, then Events. */
  @Test
  void aHigherPriorityGoesFirstWhateverItsNamespace() {
    WriteTurns<String> turns = new WriteTurns<>(WriteBudget.Priority.values().length);
    turns.add(EVENT, "a", "event-a");
    turns.add(STATUS, "a", "status-a");
    turns.add(STATUS, "b", "status-b");
    turns.add(SLICE, "b", "slice-b");
    turns.add(EVENT, "b", "event-b");
    turns.add(SLICE, "a", "slice-a");

    assertThat(drain(turns))
        .containsExactly("slice-b", "slice-a", "status-a", "status-b", "event-a", "event-b");
  }

  @Test
  void aWithdrawnWaiterIsNeverServed() {
    WriteTurns<String> turns = new WriteTurns<>(WriteBudget.Priority.values().length);
    turns.add(SLICE, "a", "a1");
    turns.add(SLICE, "b", "b1");

    assertThat(turns.remove(SLICE, "a", "a1")).isTrue();
    assertThat(turns.remove(SLICE, "a", "a1")).isFalse();
    assertThat(turns.size(SLICE)).isEqualTo(1);
    assertThat(drain(turns)).containsExactly("b1");
    assertThat(turns.isEmpty()).isTrue();
  }

  private static List<String> drain(WriteTurns<String> turns) {
    List<String> out = new ArrayList<>();
    for (String next = turns.poll(); next != null; next = turns.poll()) {
      out.add(next);
    }
    return out;
  }
}
