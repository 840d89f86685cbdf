package dev.vigil.health;

/** Where a failed real request failed (Envoy's split between upstream and local origin). */
public enum Origin {
  /** The backend answered with an error (such as a 5xx). */
  UPSTREAM,
  /** The reporting proxy failed to reach the backend (connect failure, reset, timeout). */
  LOCAL
}
