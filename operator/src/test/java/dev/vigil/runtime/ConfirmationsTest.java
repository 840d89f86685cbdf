package dev.vigil.runtime;

import static dev.vigil.runtime.PoolViews.state;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.ActiveState;
import dev.vigil.health.Confirmation;
import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ManualTimers;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Probing;
import dev.vigil.probe.Reason;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pool's Down verdicts through the real {@link PoolRuntime} and decision core to a {@link
 * Confirmer} and back (docs/design.md §8): a verdict out to the voters leaves the backend Up, the
 * backends of one turn go in one batch, the answers decide, and a lone suspect holds its verdicts.
 */
class ConfirmationsTest {
  private final ManualTimers timers = new ManualTimers();
  private final List<String> said = new ArrayList<>();
  private final List<List<String>> asked = new ArrayList<>();
  private final List<Promise<Map<String, Confirmer.Votes>>> answers = new ArrayList<>();
  private Confirmation mode = Confirmation.vote(50);
  private boolean suspect;
  private int viewsPublished;
  private Probing.Results probes;

  private final Confirmer confirmer =
      new Confirmer() {
        @Override
        public Confirmation mode(PoolKey pool, HealthSettings settings) {
          return mode;
        }

        @Override
        public Future<Map<String, Votes>> ask(
            PoolKey pool, HealthSettings settings, List<Member> backends) {
          asked.add(backends.stream().map(Member::id).toList());
          Promise<Map<String, Votes>> p = Promise.promise();
          answers.add(p);
          return p.future();
        }

        @Override
        public boolean suspect() {
          return suspect;
        }
      };

  private final TransitionSink sink =
      new TransitionSink() {
        @Override
        public void stateChanged(PoolKey p, String b, String from, String to, String why) {
          said.add(b + " " + from + "->" + to + " " + why);
        }

        @Override
        public void downNotConfirmed(PoolKey p, String b, String why) {
          said.add(b + " " + why);
        }

        @Override
        public void downHeld(PoolKey p, String b, String why) {
          said.add(b + " held");
        }
      };

  private PoolRuntime start() {
    HealthSettings s =
        HealthSettings.builder().intervalMs(1_000).timeoutMs(500).rise(1).fall(2).build();
    PoolRuntime r =
        new PoolRuntime(
            new PoolKey("shop", "web"),
            timers,
            s,
            callback -> {
              probes = callback;
              return new NoProbes();
            },
            pool -> viewsPublished++,
            sink,
            confirmer,
            timers::nowMillis);
    List<Member> members = new ArrayList<>();
    for (String id : List.of("a", "b", "c")) {
      members.add(
          Member.of(
              id,
              "uid-" + id,
              "10.0.0." + id.charAt(0),
              8080,
              null,
              null,
              false,
              false,
              List.of()));
    }
    r.update(s, CheckSpec.builder().build(), 1, members, Map.of());
    for (String id : List.of("a", "b", "c")) {
      probes.result(id, ProbeResult.pass("200", 1));
    }
    said.clear();
    viewsPublished = 0;
    return r;
  }

  private void fail(String id) {
    probes.result(id, ProbeResult.fail(Reason.CONNECTION_REFUSED, "connection refused", 1));
  }

  private static Confirmer.Votes votes(List<String> down, List<String> up, List<String> none) {
    return new Confirmer.Votes(down, up, none);
  }

  @Test
  void aVerdictOutToTheVotersStaysUpAndOneTurnsVerdictsGoInOneBatch() {
    PoolRuntime r = start();
    fail("a");
    fail("b");
    fail("a");
    fail("b");
    assertThat(state(r, "a")).as("out to the voters: still Up").isEqualTo(ActiveState.UP);
    assertThat(asked).as("asked at the end of the turn").isEmpty();
    timers.advance(0);
    assertThat(asked).containsExactly(List.of("a", "b"));

    answers
        .get(0)
        .complete(
            Map.of(
                "a", votes(List.of("zone-b"), List.of(), List.of("zone-c")),
                "b", votes(List.of(), List.of("zone-b", "zone-c"), List.of())));
    timers.advance(0);
    assertThat(state(r, "a")).isEqualTo(ActiveState.DOWN);
    assertThat(state(r, "b")).as("outvoted").isEqualTo(ActiveState.UP);
    assertThat(said)
        .containsExactly(
            "a UP->DOWN confirmed by zone-b: connection refused",
            "b not confirmed by zone-b, zone-c");
  }

  @Test
  void aNotConfirmedVerdictStartsItsFailRunAgain() {
    PoolRuntime r = start();
    fail("c");
    fail("c");
    timers.advance(0);
    answers.get(0).complete(Map.of("c", votes(List.of(), List.of("zone-b"), List.of())));
    timers.advance(0);
    fail("c");
    timers.advance(0);
    assertThat(asked).as("one fail after the reset is not the fall of 2").hasSize(1);
    fail("c");
    timers.advance(0);
    assertThat(asked).hasSize(2);
    assertThat(state(r, "c")).isEqualTo(ActiveState.UP);
  }

  @Test
  void withNoAnswerTheOwnerDecidesAlone() {
    PoolRuntime r = start();
    fail("a");
    fail("a");
    timers.advance(0);
    answers.get(0).fail("no voter reachable");
    timers.advance(0);
    assertThat(state(r, "a")).isEqualTo(ActiveState.DOWN);
    assertThat(said).containsExactly("a UP->DOWN no voter answered: connection refused");
  }

  @Test
  void aLoneSuspectHoldsItsVerdictAndSaysSoOncePerRun() {
    mode = Confirmation.FREEZE;
    PoolRuntime r = start();
    for (int i = 0; i < 5; i++) {
      fail("a");
    }
    timers.advance(0);
    assertThat(state(r, "a")).isEqualTo(ActiveState.UP);
    assertThat(asked).isEmpty();
    assertThat(said).containsExactly("a held");
    probes.result("a", ProbeResult.pass("200", 1));
    fail("a");
    fail("a");
    assertThat(said).containsExactly("a held", "a held");
  }

  private void pass(String id) {
    probes.result(id, ProbeResult.pass("200", 1));
  }

  private static BackendSnapshot backend(PoolRuntime r, String id) {
    return r.view().backends().stream()
        .filter(b -> b.member().id().equals(id))
        .findFirst()
        .orElseThrow();
  }

  /**
   * The replica turning Suspect (or back) is a new view for status even when no backend changes:
   * read at the next probe result, whatever it decides.
   */
  @Test
  void aSuspectFlipPublishesANewViewWithNoBackendChanging() {
    mode = Confirmation.ALONE;
    PoolRuntime r = start();
    pass("a");
    assertThat(viewsPublished).as("nothing changed").isZero();
    assertThat(r.view().doubt()).isEqualTo(CheckerDoubt.TRUSTED);

    suspect = true;
    mode = Confirmation.vote(50);
    pass("a");
    assertThat(viewsPublished).isEqualTo(1);
    assertThat(r.view().doubt()).isEqualTo(CheckerDoubt.CONFIRMING);
    pass("b");
    assertThat(viewsPublished).as("still Suspect: nothing new").isEqualTo(1);

    mode = Confirmation.FREEZE;
    pass("a");
    assertThat(viewsPublished).isEqualTo(2);
    assertThat(r.view().doubt()).isEqualTo(CheckerDoubt.FROZEN);

    suspect = false;
    mode = Confirmation.ALONE;
    pass("c");
    assertThat(viewsPublished).isEqualTo(3);
    assertThat(r.view().doubt()).isEqualTo(CheckerDoubt.TRUSTED);
  }

  /** A pool whose probes are quiet (or that has none) shows the flip at its next sweep. */
  @Test
  void theSweepShowsASuspectFlipWithoutAnyProbe() {
    mode = Confirmation.ALONE;
    PoolRuntime r = start();
    suspect = true;
    mode = Confirmation.FREEZE;
    timers.advance(HealthSettings.builder().build().sweepIntervalMs());
    assertThat(viewsPublished).isEqualTo(1);
    assertThat(r.view().doubt()).isEqualTo(CheckerDoubt.FROZEN);
  }

  /** Answers that leave the backend Up still change what status shows: who voted how. */
  @Test
  void theViewCarriesTheVotesOnTheLastDownEvenWhenTheyChangeNoState() {
    PoolRuntime r = start();
    assertThat(backend(r, "a").votes()).as("never asked").isNull();
    fail("a");
    fail("a");
    timers.advance(0);
    int before = viewsPublished;
    Confirmer.Votes refuted = votes(List.of(), List.of("zone-b"), List.of("zone-c"));
    answers.get(0).complete(Map.of("a", refuted));
    timers.advance(0);

    assertThat(state(r, "a")).isEqualTo(ActiveState.UP);
    assertThat(viewsPublished).isGreaterThan(before);
    assertThat(backend(r, "a").votes()).isEqualTo(refuted);
    assertThat(backend(r, "b").votes()).isNull();
  }

  /** A new owner restores the votes the last one showed, so its first status changes nothing. */
  @Test
  void restoredVotesAreInTheFirstView() {
    HealthSettings s = HealthSettings.builder().intervalMs(1_000).timeoutMs(500).build();
    PoolRuntime r =
        new PoolRuntime(
            new PoolKey("shop", "web"),
            timers,
            s,
            callback -> new NoProbes(),
            pool -> {},
            sink,
            confirmer,
            timers::nowMillis);
    Confirmer.Votes shown = votes(List.of("zone-b"), List.of(), List.of("zone-c"));
    r.update(
        s,
        CheckSpec.builder().build(),
        1,
        List.of(Member.of("a", "uid-a", "10.0.0.1", 8080, null, null, false, false, List.of())),
        Map.of(
            "a",
            new RestoredBackend(
                ActiveState.DOWN, 0, 0, dev.vigil.health.DampingState.NONE, 1, shown)));
    timers.advance(0);
    assertThat(backend(r, "a").votes()).isEqualTo(shown);
  }
}
