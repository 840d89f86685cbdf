package dev.vigil.probe;

import java.util.function.Consumer;

/**
 * Keeps a {@code grpc.health.v1.Health/Watch} stream open to one backend ({@code
 * active.grpc.watch}): every status the server streams becomes a {@link ProbeResult} at once. The
 * stream is re-opened with capped exponential backoff when it ends or fails; one stream per watch.
 */
public interface HealthWatcher {

  /** A running watch; {@link #close()} ends its stream and any pending re-open. */
  interface Watch extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Starts watching. Results go to {@code results} on the caller's Vert.x context (call it from the
   * pool's context).
   */
  Watch watch(ProbeTarget target, CheckSpec spec, Consumer<ProbeResult> results);

  /** Watches nothing (for probing without gRPC). */
  HealthWatcher NONE = (target, spec, results) -> () -> {};
}
