package dev.vigil.demo;

import java.util.function.Predicate;

/**
 * Waits for what the scenario expects to see, measured on the observer's clock, and fails with the
 * expectation in words when it does not come in time (or when the run's time limit is reached).
 */
final class Expectations {
  /** An expectation of the scenario that did not hold. */
  static final class Unmet extends RuntimeException {
    Unmet(String message) {
      super(message, null, false, false);
    }
  }

  private final DemoObserver observer;
  private final long limitMs;

  /**
   * @param limitMs the run's time limit on the observer's clock
   */
  Expectations(DemoObserver observer, long limitMs) {
    this.observer = observer;
    this.limitMs = limitMs;
  }

  long now() {
    return observer.elapsedMs();
  }

  Observation latest() {
    return observer.latest();
  }

  /**
   * Waits until the condition holds in an observation taken after {@code sinceMs}; returns the
   * observation's time minus {@code sinceMs}.
   */
  long within(String what, long sinceMs, long withinMs, Predicate<Observation> condition) {
    long deadline = sinceMs + withinMs;
    while (true) {
      Observation o = observer.latest();
      if (o.elapsedMs() >= sinceMs && condition.test(o)) {
        return o.elapsedMs() - sinceMs;
      }
      long now = now();
      if (now > limitMs) {
        throw new Unmet(what + ": the run reached its time limit (--duration) first");
      }
      if (now > deadline) {
        throw new Unmet(what + " within " + Timeline.millis(withinMs) + ": it did not happen");
      }
      sleep(10);
    }
  }

  /** Checks that the condition holds in every observation for {@code forMs}. */
  void holds(String what, long forMs, Predicate<Observation> condition) {
    long end = now() + forMs;
    while (now() < end) {
      Observation o = observer.latest();
      if (!condition.test(o)) {
        throw new Unmet(what + ": it did not hold at " + Timeline.seconds(o.elapsedMs()).strip());
      }
      sleep(10);
    }
  }

  static void check(boolean held, String what) {
    if (!held) {
      throw new Unmet(what);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Unmet("interrupted");
    }
  }
}
