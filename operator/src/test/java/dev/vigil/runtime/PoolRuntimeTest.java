package dev.vigil.runtime;

import static dev.vigil.runtime.PoolViews.backend;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.health.ActiveState;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.HealthSettingsBuilder;
import dev.vigil.health.Origin;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ManualTimers;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Probing;
import dev.vigil.probe.Reason;
import dev.vigil.publish.PoolStatusAggregator;
import dev.vigil.reconcile.RestoreFromStatus;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link PoolRuntime} on a manual clock ({@link ManualTimers}): the ejection timer, the sweep, what
 * rebuilds the view and tells the listener, and that closing leaves no timer behind. Everything
 * runs on the test's thread; nothing waits.
 */
class PoolRuntimeTest {
  private static final long T0 = 1_000_000;

  private final ManualTimers timers = new ManualTimers();
  private final AtomicInteger changes = new AtomicInteger();
  private final List<String> sink = new ArrayList<>();
  private Probing.Results probes;
  private final PoolKey key = new PoolKey("shop", "web");

  /** Epoch-like ms on the manual clock (status times are epoch ms). */
  private long now() {
    return T0 + timers.nowMillis();
  }

  private static HealthSettingsBuilder settings() {
    return HealthSettings.builder()
        .intervalMs(1_000)
        .timeoutMs(500)
        .rise(1)
        .fall(1)
        .consecutiveErrors(2)
        .baseEjectionTimeMs(1_000)
        .maxEjectionTimeMs(10_000)
        .maxEjectionPercent(100)
        .sweepIntervalMs(5_000);
  }

  private PoolRuntime runtime(HealthSettings s, TransitionSink transitions) {
    return runtime(s, transitions, Map.of());
  }

  /** With the state a previous owner left in status ({@code restored}). */
  private PoolRuntime runtime(
      HealthSettings s, TransitionSink transitions, Map<String, RestoredBackend> restored) {
    PoolRuntime r =
        new PoolRuntime(
            key,
            timers,
            s,
            callback -> {
              probes = callback;
              return new NoProbes();
            },
            pool -> changes.incrementAndGet(),
            transitions,
            Confirmer.ALONE,
            this::now);
    done(r.update(s, CheckSpec.builder().build(), 1, members("a", "b", "c", "d"), restored));
    for (String id : List.of("a", "b", "c", "d")) {
      probes.result(id, ProbeResult.pass("200", 1));
    }
    return r;
  }

  private PoolRuntime runtime(HealthSettings s) {
    return runtime(s, new RecordingSink());
  }

  private static List<Member> members(String... ids) {
    List<Member> out = new ArrayList<>();
    for (int i = 0; i < ids.length; i++) {
      out.add(
          Member.of(
              ids[i],
              "uid-" + ids[i],
              "10.0.0." + (i + 1),
              8080,
              null,
              null,
              false,
              false,
              List.of()));
    }
    return out;
  }

  private static <T> T done(Future<T> f) {
    assertThat(f.isComplete()).as("completed at once on the manual context").isTrue();
    if (f.failed()) {
      throw new AssertionError(f.cause());
    }
    return f.result();
  }

  private EjectionDecision fail(PoolRuntime r, String ip) {
    return done(r.onOutcome(ip, false, Origin.UPSTREAM));
  }

  /** The failing share's counts follow each result and each member change, with no scan. */
  @Test
  void countsTheBackendsWhoseLastProbeFailed() {
    PoolRuntime r = runtime(settings().build());
    assertThat(r.failingBackends()).isEqualTo(new FailingBackends(0, 4));
    ProbeResult refused = ProbeResult.fail(Reason.CONNECTION_REFUSED, "refused", 1);
    probes.result("a", refused);
    probes.result("b", refused);
    probes.result("b", refused);
    assertThat(r.failingBackends())
        .as("b failed twice: counted once")
        .isEqualTo(new FailingBackends(2, 4));
    probes.result("a", ProbeResult.pass("200", 1));
    assertThat(r.failingBackends()).isEqualTo(new FailingBackends(1, 4));

    // b (failing) leaves, e joins (not probed yet: probed, not failing)
    done(r.update(settings().build(), CheckSpec.builder().build(), 1, byLetter("acde"), Map.of()));
    assertThat(r.failingBackends()).isEqualTo(new FailingBackends(0, 4));
    probes.result("e", refused);
    done(r.update(settings().build(), CheckSpec.builder().build(), 1, byLetter("ae"), Map.of()));
    assertThat(r.failingBackends()).isEqualTo(new FailingBackends(1, 2));
  }

  /** Members named by letter, each at the address {@link #members} gives it in "abcde...". */
  private static List<Member> byLetter(String ids) {
    List<Member> all = members("a", "b", "c", "d", "e");
    return all.stream().filter(m -> ids.contains(m.id())).toList();
  }

  @Test
  void anEjectionEndsWhenItsTimerFiresAndClosingLeavesNoTimer() {
    PoolRuntime r = runtime(settings().build());
    fail(r, "10.0.0.1");
    assertThat(fail(r, "10.0.0.1").isEjected()).isTrue();
    assertThat(backend(r, "a").decision().ejected()).isTrue();
    assertThat(r.view().snapshot().ready()).doesNotContain("a");

    timers.advance(999);
    assertThat(backend(r, "a").decision().ejected()).isTrue();
    timers.advance(1);
    assertThat(backend(r, "a").decision().ejected()).isFalse();
    assertThat(r.view().snapshot().ready()).contains("a");
    assertThat(sink).contains("unejected a ejection time ended");

    done(r.close());
    assertThat(timers.pending()).as("timers left after close").isZero();
  }

  @Test
  void theSweepsDecayOfTheMultiplierReachesTheView() {
    PoolRuntime r = runtime(settings().build());
    fail(r, "10.0.0.1");
    fail(r, "10.0.0.1");
    timers.advance(1_000); // the ejection ends; the multiplier stays 1 until a sweep decays it
    assertThat(backend(r, "a").decision().multiplier()).isEqualTo(1);
    int before = changes.get();

    timers.advance(4_000); // the first sweep, at 5 s
    assertThat(backend(r, "a").decision().multiplier())
        .as("status shows backends[].ejections from the view")
        .isZero();
    assertThat(changes.get()).as("status and slices were told").isGreaterThan(before);
  }

  @Test
  void aDryRunReasonClearsWhenTheWouldBeEjectionWouldHaveEnded() {
    PoolRuntime r = runtime(settings().enforce(false).build());
    fail(r, "10.0.0.1");
    assertThat(fail(r, "10.0.0.1").kind()).isEqualTo(EjectionDecision.Kind.WOULD_EJECT);
    assertThat(backend(r, "a").wouldEject())
        .as("status shows the reason byte for byte")
        .isEqualTo("2 consecutive errors (dry run: passive.enforce is false)");

    timers.advance(5_000); // the sweep after the would-be ejection (1 s) ended
    assertThat(backend(r, "a").wouldEject()).as("no longer true").isNull();
  }

  @Test
  void refusalsAfterTheCapAreCountedButChangeNothingShown() {
    // 25% of 4: one ejection allowed
    PoolRuntime r = runtime(settings().maxEjectionPercent(25).build());
    fail(r, "10.0.0.1");
    fail(r, "10.0.0.1");
    fail(r, "10.0.0.2");
    assertThat(fail(r, "10.0.0.2").kind()).isEqualTo(EjectionDecision.Kind.REFUSED_BY_CAP);
    PoolView view = r.view();
    int before = changes.get();
    sink.clear();

    for (int i = 0; i < 100; i++) {
      assertThat(fail(r, "10.0.0.2").kind()).isEqualTo(EjectionDecision.Kind.REFUSED_BY_CAP);
    }
    assertThat(r.view()).as("no view rebuilt per refusal").isSameAs(view);
    assertThat(changes.get()).as("no reconcile or publish per refusal").isEqualTo(before);
    assertThat(sink)
        .as("each refusal is counted, none logged again")
        .hasSize(100)
        .containsOnly("refused again b");
  }

  @Test
  void aBatchOfOutcomesRebuildsTheViewOnce() {
    PoolRuntime r = runtime(settings().consecutiveErrors(1).build());
    int before = changes.get();
    List<OutcomeReport> batch = new ArrayList<>();
    for (String ip : List.of("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")) {
      batch.add(new OutcomeReport(ip, false, Origin.UPSTREAM, 5));
    }
    AppliedOutcomes applied = done(r.onOutcomes(batch));
    assertThat(applied.decisions()).hasSize(4);
    assertThat(r.view().snapshot().counts().ejected()).isEqualTo(4);
    assertThat(changes.get() - before).as("one change event per batch").isEqualTo(1);
  }

  @Test
  void aClosedRuntimeAppliesNoneOfABatchAndSaysSo() {
    PoolRuntime r = runtime(settings().consecutiveErrors(1).build());
    done(r.close());
    int before = changes.get();
    Future<AppliedOutcomes> batch =
        r.onOutcomes(List.of(new OutcomeReport("10.0.0.1", false, Origin.UPSTREAM, 5)));
    assertThat(batch.failed()).isTrue();
    assertThat(batch.cause()).isInstanceOf(PoolRuntime.Closed.class);
    assertThat(r.view().snapshot().counts().ejected()).isZero();
    assertThat(backend(r, "a").decision().ejected()).isFalse();
    assertThat(changes.get()).isEqualTo(before);
  }

  @Test
  void aFailingOutcomeFailsItsPromiseSoTheIntakeReleasesItsSlots() {
    TransitionSink throwing =
        new RecordingSink() {
          @Override
          public void ejected(PoolKey p, String b, long u, String w) {
            throw new IllegalStateException("sink broke");
          }
        };
    PoolRuntime r = runtime(settings().consecutiveErrors(1).build(), throwing);
    Future<AppliedOutcomes> batch =
        r.onOutcomes(List.of(new OutcomeReport("10.0.0.1", false, Origin.UPSTREAM, 5)));
    assertThat(batch.failed()).as("completed, as failed").isTrue();
    Future<EjectionDecision> one = r.onOutcome("10.0.0.2", false, Origin.UPSTREAM);
    assertThat(one.failed()).isTrue();
    assertThat(one.cause()).hasMessage("sink broke");
  }

  @Test
  void aMaterialMemberChangeRebuildsTheViewAndAnIdleUpdateDoesNot() {
    HealthSettings s = settings().build();
    PoolRuntime r = runtime(s);
    PoolView view = r.view();
    done(r.update(s, CheckSpec.builder().build(), 1, members("a", "b", "c", "d"), Map.of()));
    assertThat(r.view()).as("nothing changed").isSameAs(view);

    List<Member> moved = new ArrayList<>(members("a", "b", "c", "d"));
    Member d = moved.get(3);
    moved.set(
        3,
        Member.of(
            d.id(),
            d.podUid(),
            d.ip(),
            d.probePort(),
            "node-2",
            "zone-b",
            false,
            false,
            List.of()));
    done(r.update(s, CheckSpec.builder().build(), 1, moved, Map.of()));
    assertThat(backend(r, "d").member().zone()).isEqualTo("zone-b");

    done(r.update(s, CheckSpec.builder().build(), 1, members("a", "b", "c"), Map.of()));
    assertThat(r.view().backends()).extracting(b -> b.member().id()).containsExactly("a", "b", "c");
    assertThat(backend(r, "a").decision().state()).isEqualTo(ActiveState.UP);
  }

  /**
   * The index by address is made on the first real-request outcome, and follows members that join
   * or leave after it.
   */
  @Test
  void outcomesFindMembersThatJoinedOrLeftAfterTheFirstOutcome() {
    HealthSettings s = settings().build();
    PoolRuntime r = runtime(s); // a, b, c, d at 10.0.0.1-4
    assertThat(fail(r, "10.0.0.1")).as("the first outcome makes the index").isNotNull();
    done(r.update(s, CheckSpec.builder().build(), 1, byLetter("bcde"), Map.of()));
    assertThat(fail(r, "10.0.0.5")).as("e joined after the index was made").isNotNull();
    assertThat(fail(r, "10.0.0.1")).as("a left after the index was made").isNull();
  }

  /**
   * A reporter's keyed batch that ejected a backend goes with the ejection into status, and the
   * owner restoring that status (after a handoff, or the old owner's death) does not apply the
   * batch again, even after the ejection ended (docs/passive.md, "Sending a batch again"); another
   * key's batch is applied, and the key is forgotten after two minutes.
   */
  @Test
  void aKeyedBatchThatEjectedIsNotAppliedAgainByTheOwnerThatRestoresItsStatus() throws Exception {
    HealthSettings s = settings().sweepIntervalMs(3_600_000).build(); // no decay of the multiplier
    PoolRuntime old = runtime(s);
    List<OutcomeReport> batch =
        List.of(
            new OutcomeReport("10.0.0.1", false, Origin.UPSTREAM, 5),
            new OutcomeReport("10.0.0.1", false, Origin.UPSTREAM, 5));
    String slot = "5e".repeat(32);
    assertThat(done(old.onOutcomes(batch, slot)).decisions()).hasSize(1);
    assertThat(backend(old, "a").ejectedBy())
        .containsExactly(new BatchKey(slot.substring(0, BatchKey.DIGEST_CHARS), now()));
    BackendPoolStatus status =
        PoolStatusAggregator.build(1L, "fast", old.view(), null, null, now());
    ObjectMapper json = new ObjectMapper();
    status = json.readValue(json.writeValueAsString(status), BackendPoolStatus.class);
    done(old.close());

    PoolRuntime next =
        runtime(s, new RecordingSink(), RestoreFromStatus.restore(status, List.of(), now()));
    assertThat(backend(next, "a").decision().ejected()).isTrue();
    timers.advance(1_000);
    assertThat(backend(next, "a").decision().ejected()).as("the ejection ended").isFalse();

    AppliedOutcomes again = done(next.onOutcomes(batch, slot));
    assertThat(again.repeat()).isTrue();
    assertThat(again.decisions()).isEmpty();
    assertThat(next.outcomesApplied()).isZero();
    assertThat(backend(next, "a").decision().multiplier()).as("ejected once").isEqualTo(1);
    assertThat(backend(next, "a").ejectedBy()).as("still shown for the next owner").hasSize(1);

    String other = "7a".repeat(32);
    assertThat(done(next.onOutcomes(batch, other)).repeat()).isFalse();
    assertThat(backend(next, "a").decision().multiplier()).isEqualTo(2);
    assertThat(backend(next, "a").ejectedBy()).hasSize(2);

    timers.advance(EjectionKeys.REMEMBER_MS);
    assertThat(done(next.onOutcomes(batch, slot)).repeat()).as("forgotten").isFalse();
    assertThat(next.outcomesApplied()).isEqualTo(4);
  }

  /** At most four keys per backend, the newest; a backend that leaves takes its keys along. */
  @Test
  void aBackendKeepsItsNewestKeysAndForgetsThemWhenItLeaves() {
    HealthSettings s = settings().consecutiveErrors(1).build();
    PoolRuntime r = runtime(s);
    List<OutcomeReport> one = List.of(new OutcomeReport("10.0.0.1", false, Origin.UPSTREAM, 5));
    for (int i = 0; i < EjectionKeys.PER_BACKEND + 1; i++) {
      done(r.onOutcomes(one, i + "f".repeat(63)));
      timers.advance(s.maxEjectionTimeMs()); // the ejection ends: the next batch ejects again
    }
    assertThat(backend(r, "a").ejectedBy())
        .extracting(BatchKey::digest)
        .containsExactly(
            "1fffffffffffffff", "2fffffffffffffff", "3fffffffffffffff", "4fffffffffffffff");
    assertThat(done(r.onOutcomes(one, "0" + "f".repeat(63))).repeat()).as("dropped").isFalse();
    assertThat(done(r.onOutcomes(one, "4" + "f".repeat(63))).repeat()).isTrue();

    done(r.update(s, CheckSpec.builder().build(), 1, byLetter("bcd"), Map.of()));
    done(r.update(s, CheckSpec.builder().build(), 1, byLetter("abcd"), Map.of()));
    assertThat(done(r.onOutcomes(one, "4" + "f".repeat(63))).repeat()).as("left with a").isFalse();
  }

  /** Records what the runtime reports, as {@code <what> <backend> <why>}. */
  private class RecordingSink implements TransitionSink {
    @Override
    public void ejected(PoolKey p, String b, long until, String why) {
      sink.add("ejected " + b);
    }

    @Override
    public void ejectionRefused(PoolKey p, String b, String why) {
      sink.add("refused " + b);
    }

    @Override
    public void ejectionRefusedAgain(PoolKey p, String b) {
      sink.add("refused again " + b);
    }

    @Override
    public void wouldEject(PoolKey p, String b, String why) {
      sink.add("would eject " + b);
    }

    @Override
    public void unejected(PoolKey p, String b, String why) {
      sink.add("unejected " + b + " " + why);
    }
  }
}
