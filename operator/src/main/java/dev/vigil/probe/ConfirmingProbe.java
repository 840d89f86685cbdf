package dev.vigil.probe;

import io.vertx.core.Future;
import io.vertx.core.Promise;

/**
 * A voter's answer on one backend another replica's verdict took Down (docs/design.md §8 rule 1):
 * probe it with the pool's check every {@code interval}, without jitter, the first probe at once,
 * until this voter's own hysteresis decides ({@code fall} failures in a row: Down; {@code rise}
 * passes in a row: Up), or abstain when {@code timeout} passes first. Runs on the {@link Timers}'
 * context; one probe in flight at a time (a slow probe delays the next, as in the scheduler).
 */
public final class ConfirmingProbe {
  /** What a voter answers. */
  public enum Vote {
    UP,
    DOWN,
    /** No decision within the timeout. */
    ABSTAIN
  }

  /**
   * When a voter decides: probes {@code intervalMs} apart, Up after {@code rise} passes in a row,
   * Down after {@code fall} failures in a row, abstain after {@code timeoutMs}.
   *
   * @param intervalMs between probe starts, >= 1
   * @param rise passes in a row for Up, >= 1
   * @param fall failures in a row for Down, >= 1
   * @param timeoutMs until the voter abstains, >= 0
   */
  public record Rule(long intervalMs, int rise, int fall, long timeoutMs) {
    public Rule {
      if (intervalMs < 1 || rise < 1 || fall < 1 || timeoutMs < 0) {
        throw new IllegalArgumentException(
            "interval, rise and fall must be >= 1 and timeout >= 0, got "
                + intervalMs
                + ", "
                + rise
                + ", "
                + fall
                + ", "
                + timeoutMs);
      }
    }
  }

  private final Prober prober;
  private final Timers timers;
  private final ProbeTarget target;
  private final CheckSpec check;
  private final Rule rule;
  private final long deadline;
  private final Promise<Vote> answer = Promise.promise();
  private long deadlineTimer = -1;
  private int passes;
  private int fails;

  private ConfirmingProbe(
      Prober prober, Timers timers, ProbeTarget target, CheckSpec check, Rule rule) {
    this.prober = prober;
    this.timers = timers;
    this.target = target;
    this.check = check;
    this.rule = rule;
    this.deadline = timers.nowMillis() + rule.timeoutMs();
  }

  /** Starts the probes; the future completes on the timers' context. */
  public static Future<Vote> vote(
      Prober prober, Timers timers, ProbeTarget target, CheckSpec check, Rule rule) {
    ConfirmingProbe p = new ConfirmingProbe(prober, timers, target, check, rule);
    timers.execute(p::start);
    return p.answer.future();
  }

  private void start() {
    deadlineTimer = timers.schedule(Math.max(0, deadline - timers.nowMillis()), this::abstain);
    probe();
  }

  private void probe() {
    if (answer.future().isComplete()) {
      return;
    }
    long started = timers.nowMillis();
    prober
        .probe(target, check)
        .onComplete(
            done ->
                timers.execute(
                    () -> onResult(done.succeeded() && done.result().passed(), started)));
  }

  private void onResult(boolean passed, long started) {
    if (answer.future().isComplete()) {
      return;
    }
    if (passed) {
      fails = 0;
      passes++;
    } else {
      passes = 0;
      fails++;
    }
    if (passes >= rule.rise() || fails >= rule.fall()) {
      timers.cancel(deadlineTimer);
      answer.tryComplete(passes >= rule.rise() ? Vote.UP : Vote.DOWN);
      return;
    }
    long next = started + rule.intervalMs();
    if (next >= deadline) {
      return; // the deadline comes first: abstain then
    }
    timers.schedule(Math.max(0, next - timers.nowMillis()), this::probe);
  }

  private void abstain() {
    answer.tryComplete(Vote.ABSTAIN);
  }
}
