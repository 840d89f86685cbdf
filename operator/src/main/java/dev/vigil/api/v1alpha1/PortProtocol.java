package dev.vigil.api.v1alpha1;

/** Transport protocol of a pool port, as in a Service port. */
public enum PortProtocol {
  TCP,
  UDP,
  SCTP
}
