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
  /**
   * The result disagrees with the state, but the rise or fall run is not complete yet (or its Down
   * verdict is out to the voters).
   */
  PENDING,
  /**
   * The owner's verdict turned Down and the voters must confirm it (docs/design.md §8): the state
   * stays Up until {@link PoolHealth#onVotes} decides. Ask them.
   */
  CONFIRM,
  /**
   * The owner's verdict is Down, but it doubts itself and has no one to ask ({@link
   * Confirmation#FREEZE}): the state stays Up.
   */
  HELD
}
