package dev.vigil.health;

/** The active-check verdict of one backend. */
public enum ActiveState {
  /** Not probed yet: neither available nor counted in the panic denominator. */
  UNKNOWN,
  UP,
  DOWN
}
