package dev.vigil.health;

/**
 * What one active probe result did to a backend's {@link ActiveState}, in the manner of Envoy's
 * {@code HealthTransition}.
 */
public enum Transition {
  /** The state did not change and no change is under way. */
  UNCHANGED,
  /** The state changed (Unknown to Up/Down, Up to Down, Down to Up). */
  CHANGED,
  /** The result disagrees with the state, but the rise or fall run is not complete yet. */
  PENDING
}
