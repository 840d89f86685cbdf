package dev.vigil.security;

import java.util.Optional;

/**
 * Asks Kubernetes who a caller is and whether it may do something: the outcome intake and the
 * secured metrics port alike. Both calls block (they are API requests): callers make them through
 * {@link Reviews}, on a worker thread, never on an event loop, and cached.
 */
public interface Reviewer {
  /** The caller the token belongs to, or empty when the token is not valid (TokenReview). */
  Optional<Identity> authenticate(String token);

  /** Whether the caller may do what {@code permission} names (SubjectAccessReview). */
  boolean allows(Identity caller, Permission permission);
}
