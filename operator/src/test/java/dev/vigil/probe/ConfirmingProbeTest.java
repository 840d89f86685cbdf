package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.probe.ConfirmingProbe.Vote;
import dev.vigil.probe.http.HttpProber;
import io.vertx.core.Future;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** A voter's own probes on a backend another replica wants Down (docs/design.md §8 rule 1). */
class ConfirmingProbeTest {
  private static final CheckSpec CHECK =
      CheckSpec.builder().timeout(Duration.ofMillis(100)).build();
  private final ManualTimers timers = new ManualTimers();
  private final FakeProber prober = new FakeProber(timers);
  private final ProbeTarget target = new ProbeTarget("127.0.0.1", 8080);
  @AutoClose private final ProberRig<HttpProber> rig = ProberRig.start(HttpProber::new);

  @Test
  void realHttpProbesOnLoopbackAnswerUpForALiveServerAndDownForARefusingPort() {
    Timers onRig = new VertxTimers(rig.context());
    int live = rig.servers().replying("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    int dead = rig.servers().refusing();
    ConfirmingProbe.Rule rule = new ConfirmingProbe.Rule(50, 2, 3, 5_000);
    Future<Vote> up =
        ConfirmingProbe.vote(rig.prober(), onRig, new ProbeTarget("127.0.0.1", live), CHECK, rule);
    Future<Vote> down =
        ConfirmingProbe.vote(rig.prober(), onRig, new ProbeTarget("127.0.0.1", dead), CHECK, rule);
    assertThat(LoopbackServers.await(up)).isEqualTo(Vote.UP);
    assertThat(LoopbackServers.await(down)).isEqualTo(Vote.DOWN);
  }

  @Test
  void aDeadBackendIsDownAfterFallFailuresOneIntervalApartTheFirstAtOnce() {
    prober.refusing.add(target);
    Future<Vote> vote = voteOnTheFake(new ConfirmingProbe.Rule(1_000, 2, 3, 10_000));
    timers.advance(2_004); // the third failure is answered 5 ms after its start
    assertThat(vote.isComplete()).isFalse();
    timers.advance(1);
    assertThat(vote.result()).isEqualTo(Vote.DOWN);
    assertThat(prober.starts.get(target)).containsExactly(0L, 1_000L, 2_000L);
    assertThat(timers.pending()).as("the deadline timer is cancelled").isZero();
  }

  @Test
  void aLiveBackendIsUpAfterRisePasses() {
    Future<Vote> vote = voteOnTheFake(new ConfirmingProbe.Rule(1_000, 2, 3, 10_000));
    timers.advance(1_100);
    assertThat(vote.result()).isEqualTo(Vote.UP);
    assertThat(prober.starts.get(target)).containsExactly(0L, 1_000L);
  }

  @Test
  void noDecisionWithinTheTimeoutAbstainsAndProbesNoMore() {
    prober.hanging.add(target);
    Future<Vote> vote = voteOnTheFake(new ConfirmingProbe.Rule(1_000, 2, 3, 1_500));
    timers.advance(1_499);
    assertThat(vote.isComplete()).isFalse();
    timers.advance(1);
    assertThat(vote.result()).isEqualTo(Vote.ABSTAIN);
    timers.advance(10_000);
    assertThat(prober.starts.get(target))
        .as("no probe after the answer")
        .containsExactly(0L, 1_000L);
  }

  @Test
  void aFlappingBackendNeedsItsRunsInARow() {
    // fail, fail, pass, fail, pass, pass, pass: each change of result restarts the other run
    boolean[] refuses = {true, true, false, true, false, false, false};
    prober.refusing.add(target);
    Future<Vote> vote = voteOnTheFake(new ConfirmingProbe.Rule(1_000, 3, 3, 60_000));
    for (int i = 1; i < refuses.length; i++) {
      timers.advance(500);
      if (refuses[i]) {
        prober.refusing.add(target);
      } else {
        prober.refusing.clear();
      }
      timers.advance(500);
      assertThat(vote.isComplete()).as("after probe %d", i).isFalse();
    }
    timers.advance(10);
    assertThat(vote.result()).isEqualTo(Vote.UP);
    assertThat(prober.starts.get(target)).hasSize(7);
  }

  /** A vote on {@code target} through the fake prober, on the manual clock. */
  private Future<Vote> voteOnTheFake(ConfirmingProbe.Rule rule) {
    return ConfirmingProbe.vote(prober, timers, target, CHECK, rule);
  }

  @Test
  void aRuleRefusesAZeroIntervalRiseOrFallAndANegativeTimeoutSayingWhatItGot() {
    assertThatThrownBy(() -> new ConfirmingProbe.Rule(0, 2, 3, 1_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("interval, rise and fall must be >= 1 and timeout >= 0, got 0, 2, 3, 1000");
    assertThatThrownBy(() -> new ConfirmingProbe.Rule(1_000, 0, 3, 1_000))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConfirmingProbe.Rule(1_000, 2, 0, 1_000))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConfirmingProbe.Rule(1_000, 2, 3, -1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new ConfirmingProbe.Rule(1, 1, 1, 0).timeoutMs())
        .as("the least valid rule")
        .isZero();
  }
}
