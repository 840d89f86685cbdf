package dev.vigil.health;

/**
 * One backend's flap-damping merit (docs/design.md §2.1), apart from {@link Backend} and made at
 * its first penalty (or a restored merit), so that a pool without damping, and a backend that never
 * flapped, carries none of it. The damped flag itself stays on the backend: every verdict reads it.
 */
final class DampingMerit {
  double value; // the merit as last set, before decay
  long at; // when it was set (epoch ms)
  long releaseAt; // when a damped backend is released (epoch ms); meaningless when not damped
  int releaseIndex = -1; // position in the pool's damped-release heap, -1 when not damped
}
