package dev.vigil.passive;

/** Why one outcome of a batch was not taken; {@link #wire()} is the name in replies and metrics. */
public enum RejectReason {
  /** The item is not a JSON object. */
  INVALID_ITEM,
  /** A required field is absent (or null). */
  MISSING_FIELD,
  /** A field has the wrong type or a value outside its range. */
  INVALID_FIELD,
  /** A field the wire format does not define (a misspelt {@code ok} must not pass silently). */
  UNKNOWN_FIELD,
  /** A field appears twice in one item. */
  DUPLICATE_FIELD,
  /** {@code at} is older than the intake's maximum age. */
  STALE,
  /** {@code at} is further in the future than the allowed clock skew. */
  IN_FUTURE,
  /** No BackendPool of that namespace and name runs here. */
  UNKNOWN_POOL,
  /** The pool has no backend with that IP. */
  UNKNOWN_BACKEND,
  /** The pool's queue is full; the reporter may retry. */
  QUEUE_FULL,
  /**
   * Forwarded to the pool's owner, which did not confirm it (it was killed, or the pool moved while
   * its answer was lost): it may have been applied, so the reporter must not send it again.
   */
  UNCONFIRMED;

  private final String wire = name().toLowerCase(java.util.Locale.ROOT);

  public String wire() {
    return wire;
  }
}
