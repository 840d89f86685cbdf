package dev.vigil.ops;

import dev.vigil.publish.WriteCounter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts the operator's writes to the API server as {@code vigil_api_writes_total{resource}}, with
 * {@code resource} one of {@code endpointslices}, {@code services} and {@code status}. An idle pool
 * adds nothing (docs/design.md §3), so a rising rate with steady backends is worth a look.
 */
public final class MeteredWriteCounter implements WriteCounter {
  static final String WRITES = "vigil_api_writes";

  private final Counter slices;
  private final Counter services;
  private final Counter status;

  public MeteredWriteCounter(MeterRegistry registry) {
    this.slices = counter(registry, "endpointslices");
    this.services = counter(registry, "services");
    this.status = counter(registry, "status");
  }

  private static Counter counter(MeterRegistry registry, String resource) {
    return Counter.builder(WRITES)
        .description("Writes to the API server (create, update, patch, delete) by resource")
        .tag("resource", resource)
        .register(registry);
  }

  @Override
  public void slices(int n) {
    slices.increment(n);
  }

  @Override
  public void services(int n) {
    services.increment(n);
  }

  @Override
  public void status(int n) {
    status.increment(n);
  }
}
