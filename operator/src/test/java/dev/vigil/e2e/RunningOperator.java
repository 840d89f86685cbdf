package dev.vigil.e2e;

import java.util.List;

/** An operator an E2E test started: in the test JVM or from the image. */
public interface RunningOperator extends AutoCloseable {
  /**
   * The log lines, beyond the test JVM's own (which {@link OperatorLog} captures), that report a
   * request the API server refused.
   */
  List<String> forbidden();

  /** Stops it as a shut-down replica stops. */
  @Override
  void close();
}
