package dev.vigil.demo;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Polls what the demo shows: the EndpointSlices often (their ready set is what the scenario
 * measures), the BackendPool, Events and runtime view less often. The latest {@link Observation} is
 * readable from any thread.
 */
public final class DemoObserver implements AutoCloseable {
  private static final long SLICE_POLL_MS = 40;
  private static final long DETAIL_POLL_MS = 250;

  private final DemoCluster cluster;
  private final long startNanos;
  private final Thread thread;
  private final Consumer<Observation> onChange;
  private volatile Observation latest;
  private volatile boolean closed;

  public DemoObserver(DemoCluster cluster, long startNanos, Consumer<Observation> onChange) {
    this.cluster = cluster;
    this.startNanos = startNanos;
    this.onChange = onChange;
    this.latest = new Observation(0, Map.of(), null, List.of(), null, 0);
    this.thread = new Thread(this::loop, "demo-observer");
    thread.setDaemon(true);
  }

  public DemoObserver start() {
    latest = observe(true);
    thread.start();
    return this;
  }

  public Observation latest() {
    return latest;
  }

  /**
   * Observes until status, slices and runtime agree ({@link Observation#settled()}), at most {@code
   * maxMs}; the last observation either way. For the final print: status is coalesced, the slices
   * are not, so without this the last screen could show a backend Down in status and ready in the
   * slice.
   */
  public Observation settle(long maxMs) throws InterruptedException {
    long deadline = System.nanoTime() + maxMs * 1_000_000;
    while (true) {
      Observation o = observe(true);
      latest = o;
      if (o.settled() || System.nanoTime() >= deadline) {
        return o;
      }
      Thread.sleep(SLICE_POLL_MS);
    }
  }

  public long elapsedMs() {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  private void loop() {
    long lastDetail = 0;
    while (!closed) {
      try {
        long now = System.nanoTime();
        boolean detail = (now - lastDetail) / 1_000_000 >= DETAIL_POLL_MS;
        if (detail) {
          lastDetail = now;
        }
        Observation previous = latest;
        Observation next = observe(detail);
        latest = next;
        if (!next.endpoints().equals(previous.endpoints()) || detail) {
          onChange.accept(next);
        }
        Thread.sleep(SLICE_POLL_MS);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        // The API server may be busy or shutting down; the next poll tries again.
        try {
          Thread.sleep(SLICE_POLL_MS);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  private Observation observe(boolean detail) {
    Map<String, Boolean> endpoints = cluster.endpoints();
    Observation previous = latest;
    if (!detail) {
      return new Observation(
          elapsedMs(),
          endpoints,
          previous.pool(),
          previous.events(),
          previous.view(),
          previous.refusedEjections());
    }
    return new Observation(
        elapsedMs(),
        endpoints,
        cluster.pool(),
        cluster.events(),
        cluster.view(),
        cluster.counter("vigil_ejections_refused_total"));
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
