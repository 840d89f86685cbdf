package dev.vigil.api.v1alpha1;

/** Protocol of an active probe. */
public enum Protocol {
  HTTP,
  HTTPS,
  TCP,
  GRPC
}
