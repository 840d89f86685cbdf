package dev.vigil.runtime;

import dev.vigil.budget.ProbeClass;
import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Probing;

/** {@link Probing} that never probes: for tests of a pool's runtime without probe loops. */
public class NoProbes implements Probing {
  @Override
  public void configure(CheckSpec check, HealthSettings cadence) {}

  @Override
  public void add(String id, ProbeTarget target, ProbeClass phase) {}

  @Override
  public void remove(String id) {}

  @Override
  public void close() {}
}
