package dev.vigil.probe;

/** The protocol of an active check (DESIGN §1 {@code active.protocol}). */
public enum Protocol {
  HTTP,
  HTTPS,
  TCP,
  GRPC
}
