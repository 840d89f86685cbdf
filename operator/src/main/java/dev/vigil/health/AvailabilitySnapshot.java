package dev.vigil.health;

import java.util.Set;

/**
 * What a pool publishes, frozen at one moment; safe to hand to any thread.
 *
 * @param version changes exactly when {@code available}, {@code ready}, {@code drainingServing} or
 *     {@code panic} changes (so "same version" means "nothing to republish")
 * @param panic whether the pool is in panic
 * @param available backends that are Up, not ejected, not damped and not draining
 * @param ready backends to publish as ready: {@code available}, or in panic every decided backend
 *     (not Unknown, not draining)
 * @param drainingServing draining backends that are Up and not ejected: EndpointSlice {@code
 *     serving} of terminating endpoints (docs/design.md §3)
 * @param counts running counts of the pool
 */
public record AvailabilitySnapshot(
    long version,
    boolean panic,
    Set<String> available,
    Set<String> ready,
    Set<String> drainingServing,
    Counts counts) {

  /**
   * Counts of backends. {@code up + down + unknown == total}; {@code ejected} and {@code draining}
   * overlap the others.
   *
   * @param total members of the pool
   * @param available Up, not ejected, not draining (panic aside)
   * @param up active state Up (ejected or draining included)
   * @param down active state Down
   * @param unknown not probed yet
   * @param ejected currently ejected (draining included)
   * @param draining draining (terminating, or not Ready per the kubelet) or held out by an admin
   *     state or an agent (drain or maint, docs/decision.md)
   * @param decided neither Unknown nor draining: the panic denominator
   * @param damped currently held back by flap damping (draining included)
   */
  public record Counts(
      int total,
      int available,
      int up,
      int down,
      int unknown,
      int ejected,
      int draining,
      int decided,
      int damped) {}
}
