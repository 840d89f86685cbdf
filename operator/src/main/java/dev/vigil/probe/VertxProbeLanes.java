package dev.vigil.probe;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Context;
import io.vertx.core.internal.ContextInternal;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link ProbeLanes} on Vert.x's event loops: lane {@code k} is a context on the {@code k}-th event
 * loop after the pool's own, so one pool's lanes never share a thread.
 */
public final class VertxProbeLanes implements ProbeLanes {

  /**
   * Probes per second of one lane before a pool spreads: a loop at this rate is about half busy
   * here (fresh connections, about 0.09 CPU ms per probe), with room for bursts and results.
   * Spreading earlier buys nothing and costs per probe (the results' hand-off to the pool's loop,
   * wake-ups no longer shared); one loop sustains about 9,500 probes/s (issue 15).
   */
  public static final double DEFAULT_RATE_PER_LANE = 5_000;

  private final ContextInternal pool;
  private final List<EventLoop> others = new ArrayList<>();
  private final int max;
  private final double ratePerLane;

  /**
   * @param pool the pool's context (lane 0)
   * @param max lanes at most, the pool's own included (bounded by the event loops there are)
   * @param ratePerLane probes per second a lane takes before the pool uses one more
   */
  public VertxProbeLanes(Context pool, int max, double ratePerLane) {
    if (max < 1 || !(ratePerLane > 0)) {
      throw new IllegalArgumentException("lanes: max >= 1 and ratePerLane > 0");
    }
    this.pool = (ContextInternal) pool;
    EventLoop own = this.pool.nettyEventLoop();
    List<EventLoop> loops = new ArrayList<>();
    for (EventExecutor e : this.pool.owner().nettyEventLoopGroup()) {
      loops.add((EventLoop) e);
    }
    int at = loops.indexOf(own);
    for (int i = 1; i < loops.size(); i++) {
      others.add(loops.get((Math.max(at, 0) + i) % loops.size()));
    }
    this.max = Math.min(max, others.size() + 1);
    this.ratePerLane = ratePerLane;
  }

  /**
   * Lanes up to the number of cores (HAProxy's default thread count), {@link
   * #DEFAULT_RATE_PER_LANE} probes/s each.
   */
  public static VertxProbeLanes forCores(Context pool) {
    return new VertxProbeLanes(
        pool, Runtime.getRuntime().availableProcessors(), DEFAULT_RATE_PER_LANE);
  }

  @Override
  public int max() {
    return max;
  }

  @Override
  public double ratePerLane() {
    return ratePerLane;
  }

  @Override
  public Timers lane(int index) {
    if (index < 1 || index >= max) {
      throw new IllegalArgumentException("lane " + index + " of " + max);
    }
    return new VertxTimers(
        pool.owner().contextBuilder().withEventLoop(others.get(index - 1)).build());
  }
}
