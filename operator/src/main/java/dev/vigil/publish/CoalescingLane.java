package dev.vigil.publish;

import java.util.HashMap;
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
 * tenant's many due keys cannot keep another tenant's key from a runner (issue 31). A namespace
 * runs at most {@code maxRunning} keys at once, so the others always find a free runner, however
 * slow the API server answers the first one's writes (a bulkhead). Before it waits there, a run
 * takes its start from its namespace's {@link NamespacePace}: a namespace over its cap waits on a
 * timer, holding no runner, however idle the others are.
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
  private final NamespacePace pace;
  private final int maxRunning;

  /** Keys running now, per namespace; guarded by {@link #due}. */
  private final Map<String, Integer> running = new HashMap<>();

  /**
   * Runner tasks that found keys due but every such namespace at its bound, and so ran nothing;
   * each finished run makes one up. Guarded by {@link #due}.
   */
  private int passedOver;

  private final LongSupplier clock;
  private final long spacingMs;
  private final Work<K> work;

  /**
   * @param timers delays runs (spacing, retries)
   * @param runners runs the work
   * @param namespace the line a key waits in
   * @param pace the cap on each namespace's runs
   * @param maxRunning the most keys of one namespace that run at once (>= 1)
   * @param clock milliseconds
   * @param spacingMs the least time between the starts of two runs of a key that wrote
   */
  public CoalescingLane(
      ScheduledExecutorService timers,
      Executor runners,
      Function<K, String> namespace,
      NamespacePace pace,
      int maxRunning,
      LongSupplier clock,
      long spacingMs,
      Work<K> work) {
    if (maxRunning < 1) {
      throw new IllegalArgumentException("maxRunning must be >= 1, got " + maxRunning);
    }
    this.timers = timers;
    this.runners = runners;
    this.namespace = namespace;
    this.pace = pace;
    this.maxRunning = maxRunning;
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

  /**
   * Queues the flight in its namespace's line now, or once its spacing, its delay and its
   * namespace's pace allow.
   */
  private void dispatch(Flight<K> flight, long atLeastMs) {
    long now = clock.getAsLong();
    long earliest;
    synchronized (flight) {
      earliest = Math.max(now + atLeastMs, flight.lastWroteAt + spacingMs);
    }
    long wait = pace.reserve(namespace.apply(flight.key), earliest, now) - now;
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

  /**
   * Runs the due key whose turn it is among the namespaces under {@code maxRunning}. A runner task
   * that finds only full namespaces goes back empty-handed and is owed: the next run to finish
   * starts a task in its place, since a slot is free then.
   */
  private void runNextInTurn() {
    Flight<K> flight;
    String line;
    synchronized (due) {
      flight = due.poll(ns -> running.getOrDefault(ns, 0) < maxRunning);
      if (flight == null) {
        if (!due.isEmpty()) {
          passedOver++;
        }
        return;
      }
      line = namespace.apply(flight.key);
      running.merge(line, 1, Integer::sum);
    }
    boolean makeUp;
    try {
      run(flight);
    } finally {
      synchronized (due) {
        running.computeIfPresent(line, (ns, n) -> n == 1 ? null : n - 1);
        makeUp = passedOver > 0;
        if (makeUp) {
          passedOver--;
        }
      }
    }
    if (makeUp) {
      try {
        runners.execute(this::runNextInTurn);
      } catch (RejectedExecutionException e) {
        // stopping
      }
    }
  }

  private void run(Flight<K> flight) {
    if (flights.get(flight.key) != flight) {
      pace.refund(namespace.apply(flight.key), clock.getAsLong());
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
    settle(flight, done, start);
  }

  /** After a run: the spacing, a retry, and one more run when requests came meanwhile. */
  private void settle(Flight<K> flight, Done done, long start) {
    if (!done.wrote() && done.retryAfterMs() < 0) {
      pace.refund(namespace.apply(flight.key), clock.getAsLong()); // the API server saw nothing
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
