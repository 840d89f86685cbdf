package dev.vigil.probe;

import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** {@link Timers} on one Vert.x context (an event loop): timers and tasks all run there. */
public final class VertxTimers implements Timers {

  private final Context context;
  private final Vertx vertx;
  private final AtomicLong pending = new AtomicLong();
  private final Backlog backlog;

  /** One backlog per event loop; weak, so a closed Vert.x instance's loops take theirs along. */
  private static final Map<EventExecutor, Backlog> LOOP_BACKLOGS =
      Collections.synchronizedMap(new WeakHashMap<>());

  public VertxTimers(Context context) {
    this.context = context;
    this.vertx = context.owner();
    this.backlog =
        context.isEventLoopContext()
            ? LOOP_BACKLOGS.computeIfAbsent(
                ((ContextInternal) context).nettyEventLoop(), loop -> Backlog.forLoop())
            : Backlog.forLoop();
  }

  /** The context timers and results run on. */
  public Context context() {
    return context;
  }

  @Override
  public long nowMillis() {
    return System.nanoTime() / 1_000_000;
  }

  @Override
  public long schedule(long delayMillis, Runnable task) {
    if (Vertx.currentContext() != context) {
      throw new IllegalStateException("schedule must be called on the scheduler's context");
    }
    pending.incrementAndGet();
    return vertx.setTimer(
        Math.max(1, delayMillis),
        id -> {
          pending.decrementAndGet();
          task.run();
        });
  }

  @Override
  public boolean cancel(long timerId) {
    boolean cancelled = vertx.cancelTimer(timerId);
    if (cancelled) {
      pending.decrementAndGet();
    }
    return cancelled;
  }

  @Override
  public void execute(Runnable task) {
    if (Vertx.currentContext() == context) {
      task.run();
    } else {
      context.runOnContext(v -> task.run());
    }
  }

  @Override
  public long pending() {
    return pending.get();
  }

  @Override
  public Backlog backlog() {
    return backlog;
  }
}
