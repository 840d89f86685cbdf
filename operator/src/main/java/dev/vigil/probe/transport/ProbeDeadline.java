package dev.vigil.probe.transport;

import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.util.concurrent.TimeUnit;

/**
 * A probe's deadline, scheduled on the event loop of the context that starts the probe (the lane's)
 * as Netty's own task, and run on that context. One per probe, so it skips what {@code
 * Vertx.setTimer} adds around the same Netty task: a timer id from a counter and an entry in a map
 * that every event loop shares (issue 15: {@code cancelTimer} alone was 1 % of the prober's CPU at
 * 5,000 backends).
 */
public final class ProbeDeadline {
  private ProbeDeadline() {}

  /** Runs {@code onDeadline} on the calling context after {@code delayMs}, unless cancelled. */
  public static ScheduledFuture<?> schedule(Vertx vertx, long delayMs, Runnable onDeadline) {
    ContextInternal context = (ContextInternal) vertx.getOrCreateContext();
    return context
        .nettyEventLoop()
        .schedule(
            () -> context.emit(null, ignored -> onDeadline.run()), delayMs, TimeUnit.MILLISECONDS);
  }
}
