package dev.vigil.passive;

import java.util.Locale;

/**
 * Why an OTLP log record was not applied (the {@code reason} of {@code
 * vigil_otlp_records_dropped_total}); every one counts in the reply's {@code
 * partial_success.rejected_log_records}.
 */
public enum OtlpDrop {
  /** No profile's address attribute, or not {@code ip:port}. */
  NO_ADDRESS,
  /** Neither the backend's status nor a failure flag (a client that went away, say). */
  NO_STATUS,
  /** Envoy flags a record no host is to blame for (circuit breaking, no healthy upstream, ...). */
  NOT_THE_HOSTS,
  /** The address is no member of any pool. */
  NOT_A_BACKEND,
  /** The caller may not report for the pool (SubjectAccessReview). */
  FORBIDDEN,
  /** No replica is known to run the pool (a single replica: it does not run here). */
  NOT_HERE,
  /** Its owner could not be reached within the route's deadline: nothing was applied. */
  NOT_DELIVERED,
  /**
   * Forwarded to the owner, whose answer never came, or handed to the pool when the export's
   * deadline passed: they may have been applied, and are not sent again (at most once).
   */
  UNCONFIRMED,
  /** The pool's queue is full. */
  QUEUE_FULL,
  /** The pool's runtime did not know the backend, or could not apply the batch. */
  NOT_APPLIED;

  /** Why a delivery failed: the route's answer, or the runtime's. */
  static OtlpDrop of(Throwable failed) {
    if (failed instanceof OtlpExport.NotHere) {
      return NOT_HERE;
    }
    if (failed instanceof OutcomeRoute.NotDelivered) {
      return NOT_DELIVERED;
    }
    return failed instanceof OutcomeRoute.Unconfirmed ? UNCONFIRMED : NOT_APPLIED;
  }

  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
