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
  /** The pool does not run on this replica. */
  NOT_HERE,
  /** The pool's queue is full. */
  QUEUE_FULL,
  /** The pool's runtime did not know the backend, or could not apply the batch. */
  NOT_APPLIED;

  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
