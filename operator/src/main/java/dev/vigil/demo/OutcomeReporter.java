package dev.vigil.demo;

import java.util.List;

/** Where the demo's traffic reports the outcomes of its real requests (docs/design.md §4). */
public interface OutcomeReporter extends AutoCloseable {

  /**
   * One real-request outcome, as the intake takes it.
   *
   * @param backend {@code ip:port}
   * @param status the HTTP status, or 0 when no response came (a local-origin error)
   */
  record Outcome(
      String namespace,
      String pool,
      String backend,
      boolean ok,
      int status,
      String origin,
      long latencyMs) {}

  /** Reports a batch; returns how many the receiver accepted. */
  int report(List<Outcome> batch) throws Exception;

  /** Where a batch of one pool's outcomes goes (the URL it is POSTed to). */
  java.net.URI target(String namespace, String pool);

  @Override
  default void close() {}
}
