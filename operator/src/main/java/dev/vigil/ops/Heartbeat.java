package dev.vigil.ops;

import io.vertx.core.Vertx;
import java.util.function.LongSupplier;

/**
 * Liveness of the Vert.x event loops: a periodic timer records each tick, and the process counts as
 * alive while the last tick is recent. A blocked event loop stops the ticks (and the probes with
 * them), so {@code /healthz} fails and the kubelet restarts the Pod.
 */
public final class Heartbeat {
  static final long PERIOD_MS = 1000;

  private final Vertx vertx;
  private final LongSupplier nanos;
  private final long staleAfterMs;
  private volatile long lastTick;
  private long timer = -1;

  /**
   * @param staleAfterMs how old the last tick may be before the process counts as stuck
   */
  public Heartbeat(Vertx vertx, LongSupplier nanos, long staleAfterMs) {
    this.vertx = vertx;
    this.nanos = nanos;
    this.staleAfterMs = staleAfterMs;
    this.lastTick = nanos.getAsLong();
  }

  public Heartbeat start() {
    timer = vertx.setPeriodic(PERIOD_MS, id -> lastTick = nanos.getAsLong());
    return this;
  }

  /** Milliseconds since the last tick. */
  public long sinceLastTickMs() {
    return (nanos.getAsLong() - lastTick) / 1_000_000;
  }

  public boolean alive() {
    return sinceLastTickMs() <= staleAfterMs;
  }

  public void stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }
}
