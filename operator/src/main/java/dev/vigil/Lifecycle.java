package dev.vigil;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a started operator must release, and in which order: each part of the wiring registers its
 * closing steps as it opens them, and {@link #stop()} runs whatever was registered, for a normal
 * stop and for a start that failed half-way alike, so the cleanup is written once.
 *
 * <p>The order is by {@link Stage}, then by registration within a stage. It is the order the
 * replica's successor relies on: no new input, the last status written, informers stopped, the
 * writers drained, the ports closed, the probes stopped, and only then the Leases released (a
 * replica that still probed or wrote must not let another take its pools).
 */
final class Lifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(Lifecycle.class);

  /** The stages of a stop, first to last. */
  enum Stage {
    /** No new work: the leader Lease told that this is a stop, the outcome intake closed. */
    INPUT,
    /** The effect of accepted input written to status, while the informers still run. */
    FLUSH,
    /** JOSDK's operator: informers and reconcilers. */
    RECONCILE,
    /** The Event, slice and status writer threads. */
    WRITES,
    /** The ops server and the serving certificate. */
    SERVING,
    /** The pools' probes and timers. */
    PROBES,
    /** The shard Lease, then the leader Lease: released last. */
    LEASES
  }

  private record Step(Stage stage, String what, Runnable run) {}

  private final List<Step> steps = new ArrayList<>();

  /** Registers a step; {@code what} names the part in the warning when the step fails. */
  synchronized void on(Stage stage, String what, Runnable run) {
    steps.add(new Step(stage, what, run));
  }

  /** Runs every registered step once, in order; a failing step is logged and the rest still run. */
  void stop() {
    List<Step> ordered;
    synchronized (this) {
      ordered = new ArrayList<>(steps);
      steps.clear();
    }
    ordered.sort(Comparator.comparing(Step::stage)); // stable: registration order within a stage
    for (Step step : ordered) {
      try {
        step.run().run();
      } catch (RuntimeException e) {
        LOG.warn("stopping {} failed: {}", step.what(), e.toString());
      }
    }
  }

  /** Waits up to 10 s for a part to stop; a failure or timeout is logged, never thrown. */
  static void awaitStopped(Future<?> stopping, String what) {
    stopping
        .toCompletionStage()
        .toCompletableFuture()
        .orTimeout(10, TimeUnit.SECONDS)
        .exceptionally(
            e -> {
              Throwable cause =
                  e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
              LOG.warn("stopping {} failed: {}", what, cause.toString());
              return null;
            })
        .join();
  }

  /** Waits up to 30 s for a part to start; a failure is thrown with {@code what} in front. */
  static <T> T awaitStarted(Future<T> future, String what) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + ": interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IllegalStateException(what + ": " + cause.getMessage(), cause);
    }
  }
}
