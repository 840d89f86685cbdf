package dev.vigil.probe;

import java.util.Objects;

/**
 * The outcome of one probe: pass or fail, why, a short human detail ({@code status 503}, {@code
 * timeout}, {@code connection refused}) and how long it took.
 *
 * @param passed whether the backend passed the check
 * @param reason why; {@link Reason#OK} exactly when {@code passed}
 * @param statusCode the HTTP status code when one was read, otherwise 0
 * @param detail short text for status and events
 * @param latencyMs time from the probe's start to its verdict, in milliseconds
 */
public record ProbeResult(
    boolean passed, Reason reason, int statusCode, String detail, long latencyMs) {

  public ProbeResult {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(detail, "detail");
    if (passed != (reason == Reason.OK)) {
      throw new IllegalArgumentException("passed must equal reason == OK, got " + reason);
    }
  }

  public static ProbeResult pass(String detail, long latencyMs) {
    return new ProbeResult(true, Reason.OK, 0, detail, latencyMs);
  }

  public static ProbeResult fail(Reason reason, String detail, long latencyMs) {
    return new ProbeResult(false, reason, 0, detail, latencyMs);
  }

  /** An HTTP verdict: pass or {@link Reason#STATUS}, with the code and detail {@code status N}. */
  public static ProbeResult httpStatus(boolean passed, int code, long latencyMs) {
    return new ProbeResult(
        passed, passed ? Reason.OK : Reason.STATUS, code, "status " + code, latencyMs);
  }

  /**
   * A status in {@code failFastStatuses} (docs/design.md §2.2): a failure that takes an Up backend
   * Down at once; detail {@code status N (fail-fast)}.
   */
  public static ProbeResult failFastStatus(int code, long latencyMs) {
    return new ProbeResult(
        false, Reason.FAIL_FAST_STATUS, code, "status " + code + " (fail-fast)", latencyMs);
  }

  /** Whether this failure takes an Up backend Down at once (a fail-fast status). */
  public boolean failFast() {
    return reason == Reason.FAIL_FAST_STATUS;
  }

  /** Milliseconds since {@code startNanos} (a {@link System#nanoTime()}): a probe's latency. */
  public static long elapsedMs(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  /** A prober that threw instead of answering: a failure with {@link Reason#INTERNAL}. */
  public static ProbeResult proberError(Throwable e, long startNanos) {
    return fail(Reason.INTERNAL, "prober error: " + e, elapsedMs(startNanos));
  }

  public static ProbeResult timeout(long latencyMs) {
    return fail(Reason.TIMEOUT, "timeout", latencyMs);
  }

  /** The same verdict with a status code attached (e.g. a body mismatch on a 200). */
  public ProbeResult withStatusCode(int code) {
    return new ProbeResult(passed, reason, code, detail, latencyMs);
  }
}
