package dev.vigil.runtime;

import dev.vigil.probe.Timers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.Supplier;

/**
 * A pool's one context (docs/design.md §6): every task and timer of a {@link PoolRuntime} runs
 * there, so its decision core needs no locks. Callers on other threads get the task's answer as a
 * future, failed when the task throws.
 */
final class PoolContext {
  private final Timers timers;

  PoolContext(Timers timers) {
    this.timers = timers;
  }

  /** Runs {@code task} on the context; the future holds what it returned or threw. */
  <T> Future<T> call(Supplier<T> task) {
    Promise<T> p = Promise.promise();
    timers.execute(
        () -> {
          try {
            p.complete(task.get());
          } catch (RuntimeException e) {
            p.fail(e);
          }
        });
    return p.future();
  }

  /**
   * Runs {@code task} on the context; the future completes after it, or fails with what it threw.
   */
  Future<Void> run(Runnable task) {
    return call(
        () -> {
          task.run();
          return null;
        });
  }

  Timers timers() {
    return timers;
  }
}
