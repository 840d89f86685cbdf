package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReadinessTest {

  @Test
  void aSoleReplicaIsReadyOnceStartedWithSyncedInformers() {
    assertThat(new Readiness(() -> false, () -> true, Leadership.sole()).check().ready()).isFalse();
    assertThat(new Readiness(() -> true, () -> false, Leadership.sole()).check().ready()).isFalse();
    assertThat(new Readiness(() -> true, () -> true, Leadership.sole()).check().ready()).isTrue();
  }

  @Test
  void aStandbyIsReadyWithoutAskingItsStoppedInformers() {
    Leadership standby = Leadership.elected();
    standby.newLeader("other");
    Readiness readiness =
        new Readiness(
            () -> true,
            () -> {
              throw new IllegalStateException("not started");
            },
            standby);
    assertThat(readiness.check().ready()).isTrue();
    assertThat(standby.active()).isFalse();
  }

  @Test
  void anInformerCheckThatThrowsIsNotReady() {
    Readiness readiness =
        new Readiness(
            () -> true,
            () -> {
              throw new IllegalStateException("boom");
            },
            Leadership.sole());
    assertThat(readiness.check()).isEqualTo(new Readiness.Verdict(false, "informers: boom"));
  }

  @Test
  void becomingLeaderAfterStandbyKeepsTheLeaderRole() {
    Leadership l = Leadership.elected();
    l.newLeader("other");
    l.startedLeading();
    l.newLeader("me");
    assertThat(l.role()).isEqualTo(Leadership.Role.LEADING);
    assertThat(l.active()).isTrue();
  }
}
