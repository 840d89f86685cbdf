package dev.vigil.runtime;

import dev.vigil.health.HealthSettings;
import dev.vigil.health.ProbePhase;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeSchedule;
import dev.vigil.probe.ProbeScheduler;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Timers;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.random.RandomGenerator;

/** A pool's probe loops on the {@link ProbeScheduler}, results delivered on the pool's context. */
public final class ScheduledProbing implements Probing {
  private final ProbeScheduler<String> scheduler;
  private final Map<String, ProbeTarget> targets = new HashMap<>();
  private CheckSpec check;
  private ProbeSchedule schedule;

  /**
   * @param timers the pool context's timers (results arrive on that context)
   */
  public ScheduledProbing(
      Prober prober, Timers timers, RandomGenerator random, PoolRuntime.ProbeCallback callback) {
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
  }

  @Override
  public void add(String id, ProbeTarget target) {
    targets.put(id, target);
    scheduler.add(id, target, check, schedule);
  }

  @Override
  public void remove(String id) {
    targets.remove(id);
    scheduler.remove(id);
  }

  @Override
  public void phase(String id, ProbePhase phase) {
    scheduler.phase(id, phase);
  }

  @Override
  public void close() {
    targets.clear();
    scheduler.stop();
  }
}
