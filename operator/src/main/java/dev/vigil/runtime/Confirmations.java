package dev.vigil.runtime;

import dev.vigil.health.ActiveState;
import dev.vigil.health.Confirmation;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.Transition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * One pool's Down verdicts out to the voters (docs/design.md §8): the backends whose verdict turned
 * Down in one turn of the pool's context go to the voters in one batch; their answers come back to
 * the context and into the decision core. Touched only on the pool's context.
 */
final class Confirmations {
  /** What the runtime does after answers changed something shown. */
  interface Decided {
    void afterVotes(boolean material);
  }

  private final PoolKey key;
  private final PoolContext context;
  private final PoolHealth health;
  private final TrackedBackends backends;
  private final Confirmer confirmer;
  private final TransitionSink sink;
  private final LongSupplier clock;
  private final Decided decided;
  private final List<TrackedBackend> batch = new ArrayList<>();
  private CheckerDoubt doubt = CheckerDoubt.TRUSTED;

  Confirmations(
      PoolKey key,
      PoolContext context,
      PoolHealth health,
      TrackedBackends backends,
      Confirmer confirmer,
      TransitionSink sink,
      LongSupplier clock,
      Decided decided) {
    this.key = key;
    this.context = context;
    this.health = health;
    this.backends = backends;
    this.confirmer = confirmer;
    this.sink = sink;
    this.clock = clock;
    this.decided = decided;
  }

  /**
   * Sets how the core decides Down verdicts now and reads whether this replica is Suspect; before
   * each probe result and sweep, and on each update of the pool.
   */
  void refreshMode() {
    Confirmation mode = confirmer.mode(key, health.settings());
    health.confirmation(mode);
    doubt = CheckerDoubt.of(confirmer.suspect(), mode.mode());
  }

  /** What status shows of this replica's self-doubt, as of the last {@link #refreshMode}. */
  CheckerDoubt doubt() {
    return doubt;
  }

  /** What a probe result's transition asks of the voters, if anything. */
  void after(TrackedBackend t, Transition transition) {
    if (transition == Transition.CONFIRM) {
      ask(t);
    } else if (transition == Transition.HELD) {
      held(t);
    } else {
      t.heldReported = false;
    }
  }

  /** The backend's verdict is out to the voters: ask them at the end of this turn. */
  private void ask(TrackedBackend t) {
    t.confirmAskedAt(clock.getAsLong()); // hot for an interval (docs/design.md §9)
    if (batch.isEmpty()) {
      context.timers().schedule(0, this::sendBatch);
    }
    batch.add(t);
  }

  /** A suspect, lone owner holds a Down verdict: said once per fail run. */
  private void held(TrackedBackend t) {
    if (!t.heldReported) {
      t.heldReported = true;
      sink.downHeld(key, t.id(), "this checker is Suspect and no voter in another zone is live");
    }
  }

  private void sendBatch() {
    List<TrackedBackend> asked = List.copyOf(batch);
    batch.clear();
    List<Member> members = asked.stream().map(t -> t.member).toList();
    confirmer
        .ask(key, health.settings(), members)
        .onComplete(
            answers ->
                context.run(() -> apply(asked, answers.succeeded() ? answers.result() : Map.of())));
  }

  private void apply(List<TrackedBackend> asked, Map<String, Confirmer.Votes> answers) {
    boolean material = false;
    for (TrackedBackend t : asked) {
      if (backends.byId(t.id()) != t) {
        continue; // gone meanwhile
      }
      Confirmer.Votes votes = answers.getOrDefault(t.id(), Confirmer.Votes.NONE);
      long now = clock.getAsLong();
      Transition result = health.onVotes(t.backend, votes.down().size(), votes.up().size(), now);
      material |= !votes.equals(t.lastVotes()); // status shows them
      t.lastVotes(votes);
      if (result == Transition.CHANGED) {
        t.since = now;
        material = true;
        sink.stateChanged(
            key, t.id(), ActiveState.UP.name(), ActiveState.DOWN.name(), confirmed(t, votes));
      } else if (t.backend.state() == ActiveState.UP) {
        sink.downNotConfirmed(key, t.id(), notConfirmed(votes));
      }
    }
    decided.afterVotes(material);
  }

  private static String confirmed(TrackedBackend t, Confirmer.Votes votes) {
    String detail = t.probed ? ": " + t.probeDetail : "";
    return (votes.down().isEmpty() ? "no voter answered" : "confirmed by " + zones(votes.down()))
        + detail;
  }

  static String notConfirmed(Confirmer.Votes votes) {
    String why = "not confirmed by " + zones(votes.up());
    return votes.abstained().isEmpty() ? why : why + "; " + zones(votes.abstained()) + " abstained";
  }

  /** The zones in name order (the voters come heaviest first, which differs per pool). */
  private static String zones(List<String> zones) {
    return String.join(", ", zones.stream().sorted().toList());
  }
}
