package dev.vigil.health;

/**
 * A backend's flap-damping state as published in status, for {@link PoolHealth#restore} after a
 * restart (docs/design.md §2.1): the merit as last set, when, and whether the backend was damped.
 *
 * @param merit the merit at {@code meritAt}, before decay (>= 0)
 * @param meritAt when the merit was set (epoch ms)
 * @param damped whether the backend was damped
 */
public record DampingState(double merit, long meritAt, boolean damped) {
  /** Never penalized. */
  public static final DampingState NONE = new DampingState(0, 0, false);

  public DampingState {
    if (!(merit >= 0) || Double.isInfinite(merit)) {
      throw new IllegalArgumentException("merit must be finite and >= 0, was " + merit);
    }
  }
}
