package dev.vigil.publish;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-key single flight, coalesced: the lane that the slice publisher and the status publisher each
 * run their pools' writes in (docs/publishing.md). For one key at most one run is scheduled or
 * running at a time; requests that arrive meanwhile are merged into one more run after it, which
 * reads the newest state. Runs of one key start at least {@code spacingMs} apart, counted from the
 * start of the last run that wrote (the first request after a quiet spell runs at once). A run that
 * failed names when to try again; a request before then runs at once, as any other (what failed may
 * be gone), and the retry merges into whatever runs then.
 *
 * <p>A key due to run waits in its namespace's line ({@link WriteTurns}), and a free runner takes
 * the key whose turn it is: round robin between namespaces, oldest first within one, so one
 * tenant's many due keys cannot keep another tenant's key from a runner (issue 31).
 *
 * <p>Thread-safe; {@link #request} never blocks (an event loop calls it). Runs happen on {@code
 * runners}, delays on {@code timers}.
 *
 * @param <K> a key, e.g. a pool
 */
public final class CoalescingLane<K> {
  private static final Logger LOG = LoggerFactory.getLogger(CoalescingLane.class);
  private static final long RETRY_AFTER_BUG_MS = 5_000;

  /** What one run did. */
  public record Done(boolean wrote, long retryAfterMs) {
    /** Wrote: the next run of the key starts at least the spacing after this one began. */
    public static final Done WROTE = new Done(true, -1);

    /** Nothing to write (or nothing may be written): the next request runs at once. */
    public static final Done NOTHING = new Done(false, -1);

    /** Failed: run again after {@code ms}, whether or not anything is requested meanwhile. */
    public static Done retryAfter(long ms) {
      return new Done(false, Math.max(0, ms));
    }
  }

  /** The work of one run for a key; blocks its runner thread, never an event loop. */
  @FunctionalInterface
  public interface Work<K> {
    Done run(K key);
  }

  /** One key's flight; guarded by itself. */
  private static final class Flight<K> {
    final K key;

    /** A run is scheduled, queued or running. */
    boolean busy;

    /** Requested while busy: run once more after the current run. */
    boolean again;

    long lastWroteAt = Long.MIN_VALUE / 2;

    Flight(K key) {
      this.key = key;
    }
  }

  private final Map<K, Flight<K>> flights = new ConcurrentHashMap<>();

  /** Flights due to run, one line per namespace; guarded by itself. */
  private final WriteTurns<Flight<K>> due = new WriteTurns<>(1);

  private final ScheduledExecutorService timers;
  private final Executor runners;
  private final Function<K, String> namespace;
  private final LongSupplier clock;
  private final long spacingMs;
  private final Work<K> work;

  /**
   * @param timers delays runs (spacing, retries)
   * @param runners runs the work
   * @param namespace the line a key waits in
   * @param clock milliseconds
   * @param spacingMs the least time between the starts of two runs of a key that wrote
   */
  public CoalescingLane(
      ScheduledExecutorService timers,
      Executor runners,
      Function<K, String> namespace,
      LongSupplier clock,
      long spacingMs,
      Work<K> work) {
    this.timers = timers;
    this.runners = runners;
    this.namespace = namespace;
    this.clock = clock;
    this.spacingMs = spacingMs;
    this.work = work;
  }

  /** Asks for a run of {@code key}: now, after its spacing, or merged into one already asked. */
  public void request(K key) {
    Flight<K> flight = flights.computeIfAbsent(key, Flight::new);
    synchronized (flight) {
      if (flight.busy) {
        flight.again = true;
        return;
      }
      flight.busy = true;
      flight.again = false;
    }
    dispatch(flight, 0);
  }

  /** Forgets the key: a run already due is skipped; a later request starts afresh. */
  public void forget(K key) {
    flights.remove(key);
  }

  /** Queues the flight in its namespace's line now, or once its spacing and delay have passed. */
  private void dispatch(Flight<K> flight, long atLeastMs) {
    long wait;
    synchronized (flight) {
      wait = Math.max(atLeastMs, flight.lastWroteAt + spacingMs - clock.getAsLong());
    }
    try {
      if (wait > 0) {
        timers.schedule(() -> queue(flight), wait, TimeUnit.MILLISECONDS);
      } else {
        queue(flight);
      }
    } catch (RejectedExecutionException e) {
      land(flight); // shutting down
    }
  }

  private void queue(Flight<K> flight) {
    String line = namespace.apply(flight.key);
    synchronized (due) {
      due.add(0, line, flight);
    }
    try {
      runners.execute(this::runNextInTurn);
    } catch (RejectedExecutionException e) {
      boolean withdrawn;
      synchronized (due) {
        withdrawn = due.remove(0, line, flight);
      }
      if (withdrawn) {
        land(flight);
      }
    }
  }

  private void runNextInTurn() {
    Flight<K> flight;
    synchronized (due) {
      flight = due.poll();
    }
    if (flight != null) {
      run(flight);
    }
  }

  private void run(Flight<K> flight) {
    if (flights.get(flight.key) != flight) {
      land(flight); // forgotten
      return;
    }
    long start = clock.getAsLong();
    synchronized (flight) {
      flight.again = false;
    }
    Done done;
    try {
      done = work.run(flight.key);
    } catch (RuntimeException e) {
      LOG.warn(
          "run for {} failed (retry in {} ms): {}", flight.key, RETRY_AFTER_BUG_MS, e.toString());
      done = Done.retryAfter(RETRY_AFTER_BUG_MS);
    }
    boolean again;
    synchronized (flight) {
      if (done.wrote()) {
        flight.lastWroteAt = start;
      }
      again = flight.again;
      flight.again = false;
      flight.busy = again;
    }
    if (done.retryAfterMs() >= 0) {
      retryLater(flight, done.retryAfterMs());
    }
    if (!again) {
      return;
    }
    if (flights.get(flight.key) == flight) {
      dispatch(flight, 0);
    } else {
      land(flight);
    }
  }

  private void retryLater(Flight<K> flight, long ms) {
    try {
      timers.schedule(
          () -> {
            if (flights.get(flight.key) == flight) {
              request(flight.key);
            }
          },
          ms,
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // shutting down
    }
  }

  private static void land(Flight<?> flight) {
    synchronized (flight) {
      flight.busy = false;
    }
  }
}
