package dev.vigil.probe;

import java.util.HashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The {@code grpc.health.v1.Health/Watch} streams of one pool ({@code active.grpc.watch}): one per
 * backend while the check asks for them, each streamed status handed to {@code results} on the
 * pool's context at once, as a probe result. A replaced or closed stream's late status is dropped.
 */
final class WatchStreams implements BackendLoops {
  private final HealthWatcher watcher;
  private final Timers timers;
  private final BiConsumer<String, ProbeResult> results;
  private final Map<String, HealthWatcher.Watch> watches = new HashMap<>();
  private CheckSpec check;

  WatchStreams(HealthWatcher watcher, Timers timers, BiConsumer<String, ProbeResult> results) {
    this.watcher = watcher;
    this.timers = timers;
    this.results = results;
  }

  @Override
  public void configure(CheckSpec check, Map<String, ProbeTarget> members) {
    this.check = check;
    closeStreams();
    members.forEach(this::open);
  }

  @Override
  public void add(String id, ProbeTarget target) {
    open(id, target);
  }

  @Override
  public void remove(String id) {
    HealthWatcher.Watch w = watches.remove(id);
    if (w != null) {
      w.close();
    }
  }

  @Override
  public void close() {
    closeStreams();
  }

  private void closeStreams() {
    watches.values().forEach(HealthWatcher.Watch::close);
    watches.clear();
  }

  /** Opens the backend's stream when the check asks for one. */
  private void open(String id, ProbeTarget target) {
    if (check == null || check.protocol() != ProbeProtocol.GRPC || !check.grpc().watch()) {
      return;
    }
    HealthWatcher.Watch[] self = new HealthWatcher.Watch[1];
    self[0] =
        watcher.watch(
            target,
            check,
            result ->
                timers.execute(
                    () -> {
                      // a stream replaced (new target or check) or closed is no longer there
                      if (watches.get(id) == self[0]) {
                        results.accept(id, result);
                      }
                    }));
    HealthWatcher.Watch previous = watches.put(id, self[0]);
    if (previous != null) {
      previous.close();
    }
  }
}
