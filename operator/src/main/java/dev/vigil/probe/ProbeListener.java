package dev.vigil.probe;

/** Receives every probe result, on the scheduler's context, in the order the probes ended. */
@FunctionalInterface
public interface ProbeListener<K> {

  void onResult(K backend, ProbeTarget target, ProbeResult result);
}
