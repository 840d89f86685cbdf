package dev.vigil.probe;

/**
 * Time and one-shot timers for the {@link ProbeScheduler}, all on one context. {@link VertxTimers}
 * is the real one; tests use a manual clock.
 */
public interface Timers {

  /** A monotonic clock in milliseconds (only differences mean anything). */
  long nowMillis();

  /** Runs {@code task} once, on the context, after {@code delayMillis} (>= 0). */
  long schedule(long delayMillis, Runnable task);

  /** Cancels a timer; false if it already ran or was cancelled. */
  boolean cancel(long timerId);

  /** Runs {@code task} on the context: now if the caller is on it, otherwise soon. */
  void execute(Runnable task);

  /** Timers scheduled and neither run nor cancelled (to prove that nothing leaks). */
  long pending();

  /**
   * The probe backlog of the thread these timers run on, shared by every scheduler there (one per
   * event loop); always the same instance for one context.
   */
  Backlog backlog();
}
