package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.health.EjectionDecision.Kind;
import org.junit.jupiter.api.Test;

class MembershipTest {
  private static final long T0 = 1_000_000;

  private final PoolHealth pool = new PoolHealth(HealthSettings.defaults());

  private void upPool(int n) {
    for (int i = 0; i < n; i++) {
      pool.onProbeResult(pool.add("b" + i), true, T0);
    }
  }

  private EjectionDecision errors(String id, int n) {
    EjectionDecision last = null;
    for (int i = 0; i < n; i++) {
      last = pool.onRequestOutcome(id, false, Origin.UPSTREAM, T0);
    }
    return last;
  }

  @Test
  void removingAnEjectedBackendUpdatesEveryCountAndFreesTheCap() {
    upPool(10);
    errors("b0", 5);
    assertThat(errors("b1", 5)).isEqualTo(EjectionDecision.REFUSED_BY_CAP);
    pool.add("b10");
    pool.remove("b0");
    AvailabilitySnapshot.Counts c = pool.snapshot().counts();
    assertThat(c).isEqualTo(new AvailabilitySnapshot.Counts(10, 9, 9, 0, 1, 0, 0, 9, 0));
    assertThat(pool.nextEjectionEnd()).isEqualTo(Long.MAX_VALUE);
    assertThat(errors("b1", 1).kind()).isEqualTo(Kind.EJECTED);
  }

  @Test
  void removingADownBackendUpdatesEveryCount() {
    upPool(4);
    for (int i = 0; i < 3; i++) {
      pool.onProbeResult("b3", false, T0);
    }
    assertThat(pool.snapshot().counts().down()).isEqualTo(1);
    pool.remove("b3");
    AvailabilitySnapshot s = pool.snapshot();
    assertThat(s.counts()).isEqualTo(new AvailabilitySnapshot.Counts(3, 3, 3, 0, 0, 0, 0, 3, 0));
    assertThat(s.available()).containsExactlyInAnyOrder("b0", "b1", "b2");
  }

  @Test
  void removingADrainingBackendUpdatesTheDrainingCount() {
    upPool(3);
    pool.setDraining("b0", true);
    pool.remove("b0");
    assertThat(pool.snapshot().counts())
        .isEqualTo(new AvailabilitySnapshot.Counts(2, 2, 2, 0, 0, 0, 0, 2, 0));
  }

  @Test
  void eventsOnARemovedHandleAreIgnored() {
    upPool(2);
    Backend b = pool.backend("b0");
    pool.remove(b);
    long version = pool.version();
    assertThat(b.isMember()).isFalse();
    assertThat(pool.onProbeResult(b, false, T0)).isEqualTo(Transition.UNCHANGED);
    assertThat(pool.onRequestOutcome(b, false, Origin.LOCAL, T0))
        .isEqualTo(EjectionDecision.NOT_NEEDED);
    assertThat(pool.remove(b)).isFalse();
    assertThat(pool.version()).isEqualTo(version);
    assertThat(pool.size()).isEqualTo(1);
  }

  @Test
  void eventsForAnUnknownIdAreIgnored() {
    upPool(1);
    assertThat(pool.onProbeResult("nobody", true, T0)).isEqualTo(Transition.UNCHANGED);
    assertThat(pool.onRequestOutcome("nobody", false, Origin.UPSTREAM, T0))
        .isEqualTo(EjectionDecision.NOT_NEEDED);
    assertThat(pool.remove("nobody")).isFalse();
  }

  @Test
  void addingAnExistingIdReturnsTheSameHandle() {
    Backend b = pool.add("a");
    assertThat(pool.add("a")).isSameAs(b);
    assertThat(pool.size()).isEqualTo(1);
  }

  @Test
  void aReAddedBackendStartsUnknown() {
    upPool(1);
    pool.remove("b0");
    Backend b = pool.add("b0");
    assertThat(b.state()).isEqualTo(ActiveState.UNKNOWN);
    assertThat(pool.snapshot().available()).isEmpty();
  }

  @Test
  void restoringFromStatusRepublishesTheSameVerdictAndKeepsTheEjection() {
    PoolHealth restarted = new PoolHealth(HealthSettings.defaults());
    for (int i = 0; i < 4; i++) {
      restarted.add("b" + i);
    }
    restarted.restore(restarted.backend("b0"), ActiveState.UP, 0, 0, T0);
    restarted.restore(restarted.backend("b1"), ActiveState.UP, 2, T0 + 50_000, T0);
    restarted.restore(restarted.backend("b2"), ActiveState.DOWN, 0, 0, T0);
    restarted.restore(restarted.backend("b3"), ActiveState.UP, 1, T0 - 1, T0);
    AvailabilitySnapshot s = restarted.snapshot();
    assertThat(s.available()).containsExactlyInAnyOrder("b0", "b3");
    assertThat(s.panic()).isFalse();
    Backend b1 = restarted.backend("b1");
    assertThat(b1.ejected()).isTrue();
    assertThat(b1.multiplier()).isEqualTo(2);
    assertThat(restarted.nextEjectionEnd()).isEqualTo(T0 + 50_000);
    // an Up backend restored with empty runs needs a full fall run to go Down
    restarted.onProbeResult("b0", false, T0);
    assertThat(restarted.backend("b0").state()).isEqualTo(ActiveState.UP);
  }

  @Test
  void restoredPanicFlagKeepsAPoolInsideItsBandInPanic() {
    HealthSettings banded =
        HealthSettings.builder().panicThresholdPercent(50).panicExitPercent(80).build();
    PoolHealth restarted = new PoolHealth(banded);
    String[] states = {"U", "U", "U", "D", "D"}; // 60 %: inside the band
    for (int i = 0; i < states.length; i++) {
      Backend b = restarted.add("b" + i);
      restarted.restore(b, states[i].equals("U") ? ActiveState.UP : ActiveState.DOWN, 0, 0, T0);
    }
    assertThat(restarted.panic()).isFalse();
    restarted.restorePanic(true);
    assertThat(restarted.panic()).isTrue();
    assertThat(restarted.snapshot().ready()).hasSize(5);
  }

  @Test
  void restoredPanicFlagThatContradictsTheCountsIsCorrected() {
    PoolHealth restarted = new PoolHealth(HealthSettings.defaults());
    restarted.restore(restarted.add("a"), ActiveState.UP, 0, 0, T0);
    restarted.restorePanic(true);
    assertThat(restarted.panic()).isFalse();
  }

  @Test
  void viewsCopyEveryBackendsState() {
    upPool(2);
    errors("b1", 3);
    assertThat(pool.views())
        .containsExactly(
            new BackendView(
                "b0",
                ActiveState.UP,
                1,
                0,
                0,
                0,
                0,
                false,
                0,
                false,
                true,
                false,
                0,
                0,
                0,
                BackendHold.NONE),
            new BackendView(
                "b1",
                ActiveState.UP,
                1,
                0,
                3,
                0,
                0,
                false,
                0,
                false,
                true,
                false,
                0,
                0,
                0,
                BackendHold.NONE));
  }

  /**
   * Backends added without a lookup ({@link PoolHealth#addNew}) are found by id, and so are those
   * added or removed after the index by id was made on the first lookup.
   */
  @Test
  void theIndexByIdFollowsMembersAddedAndRemovedAfterItWasMade() {
    Backend b0 = pool.addNew("b0");
    Backend b1 = pool.addNew("b1");
    assertThat(pool.backend("b0")).as("the first lookup makes the index").isSameAs(b0);
    Backend b2 = pool.addNew("b2");
    pool.remove(b1);
    assertThat(pool.backend("b2")).as("added after the index was made").isSameAs(b2);
    assertThat(pool.backend("b1")).as("removed after the index was made").isNull();
    assertThat(pool.add("b2")).as("add returns the member present").isSameAs(b2);
    assertThatThrownBy(() -> pool.addNew("b0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("b0");
    assertThat(pool.snapshot().counts().total()).isEqualTo(2);
  }
}
