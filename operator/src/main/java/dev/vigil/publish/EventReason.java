package dev.vigil.publish;

/** Reasons of the Kubernetes Events Vigil emits, one per kind of transition or refusal. */
public enum EventReason {
  BackendDown("Warning"),
  BackendUp("Normal"),
  BackendEjected("Warning"),
  BackendUnejected("Normal"),
  EjectionRefused("Warning"),
  BackendDamped("Warning"),
  BackendReleased("Normal"),
  WouldEject("Warning"),
  /** Voters in other zones saw the backend Up: the owner's Down was not published (§8). */
  DownNotConfirmed("Warning"),
  /** A Suspect owner with no voter to ask held a Down back (§8). */
  DownHeld("Warning"),
  PanicEntered("Warning"),
  PanicExited("Normal"),
  InvalidPolicy("Warning"),
  PolicyNotFound("Warning"),
  PublishingRefused("Warning");

  private final String type;

  EventReason(String type) {
    this.type = type;
  }

  /** {@code Normal} or {@code Warning}. */
  public String type() {
    return type;
  }
}
