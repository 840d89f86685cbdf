package dev.vigil.testing;

import io.vertx.core.Context;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Runs work on a Vert.x context from a test's (or a bench tool's) own thread. */
public final class OnContext {
  private OnContext() {}

  /**
   * Runs {@code task} on {@code context} and waits until it is done, at most 10 s.
   *
   * @throws IllegalStateException when the task did not finish within 10 s (a stuck event loop)
   */
  public static void run(Context context, Runnable task) throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    context.runOnContext(
        v -> {
          try {
            task.run();
          } finally {
            done.countDown();
          }
        });
    if (!done.await(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("a task on " + context + " did not finish within 10 s");
    }
  }
}
