package dev.vigil.runtime;

import dev.vigil.health.HealthSettings;
import dev.vigil.health.ProbePhase;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.HealthWatcher;
import dev.vigil.probe.ProbeSchedule;
import dev.vigil.probe.ProbeScheduler;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Protocol;
import dev.vigil.probe.Timers;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * A pool's probe loops on the {@link ProbeScheduler}, results delivered on the pool's context. With
 * {@code active.grpc.watch}, also one Health/Watch stream per backend ({@link HealthWatcher}),
 * whose every streamed status goes to the same callback at once, as a probe result.
 */
public final class ScheduledProbing implements Probing {
  private final ProbeScheduler<String> scheduler;
  private final HealthWatcher watcher;
  private final Timers timers;
  private final PoolRuntime.ProbeCallback callback;
  private final Map<String, ProbeTarget> targets = new HashMap<>();
  private final Map<String, HealthWatcher.Watch> watches = new HashMap<>();
  private CheckSpec check;
  private ProbeSchedule schedule;

  /**
   * @param timers the pool context's timers (results arrive on that context)
   */
  public ScheduledProbing(
      Prober prober, Timers timers, RandomGenerator random, PoolRuntime.ProbeCallback callback) {
    this(prober, HealthWatcher.NONE, timers, random, callback);
  }

  /**
   * @param watcher opens the Watch streams of {@code active.grpc.watch}
   * @param timers the pool context's timers (results arrive on that context)
   */
  public ScheduledProbing(
      Prober prober,
      HealthWatcher watcher,
      Timers timers,
      RandomGenerator random,
      PoolRuntime.ProbeCallback callback) {
    this.watcher = watcher;
    this.timers = timers;
    this.callback = callback;
    this.scheduler =
        new ProbeScheduler<>(
            prober,
            timers,
            random,
            (id, target, result) -> {
              if (target.equals(targets.get(id))) {
                callback.result(id, result);
              }
            });
  }

  @Override
  public void configure(CheckSpec check, HealthSettings cadence) {
    this.check = check;
    this.schedule =
        new ProbeSchedule(
            Duration.ofMillis(cadence.intervalMs()),
            Duration.ofMillis(cadence.fastIntervalMs()),
            Duration.ofMillis(cadence.downIntervalMs()),
            cadence.jitterPercent());
    targets.forEach((id, target) -> scheduler.update(id, target, check, schedule));
    watches.values().forEach(HealthWatcher.Watch::close);
    watches.clear();
    targets.forEach(this::watch);
  }

  /** Opens the backend's Watch stream when the check asks for one; results go to the callback. */
  private void watch(String id, ProbeTarget target) {
    if (check == null || check.protocol() != Protocol.GRPC || !check.grpc().watch()) {
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
                      if (watches.get(id) == self[0] && target.equals(targets.get(id))) {
                        callback.result(id, result);
                      }
                    }));
    HealthWatcher.Watch previous = watches.put(id, self[0]);
    if (previous != null) {
      previous.close();
    }
  }

  @Override
  public void add(String id, ProbeTarget target) {
    targets.put(id, target);
    scheduler.add(id, target, check, schedule);
    watch(id, target);
  }

  @Override
  public void remove(String id) {
    targets.remove(id);
    scheduler.remove(id);
    HealthWatcher.Watch w = watches.remove(id);
    if (w != null) {
      w.close();
    }
  }

  @Override
  public void phase(String id, ProbePhase phase) {
    scheduler.phase(id, phase);
  }

  @Override
  public void close() {
    targets.clear();
    watches.values().forEach(HealthWatcher.Watch::close);
    watches.clear();
    scheduler.stop();
  }
}
