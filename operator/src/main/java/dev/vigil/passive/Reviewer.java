package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import java.util.Optional;

/**
 * Asks Kubernetes who a caller is and whether it may report outcomes for a pool. Both calls block
 * (they are API requests): the intake makes them on a worker thread, never on an event loop, and
 * caches the answers.
 */
public interface Reviewer {
  /** The caller the token belongs to, or empty when the token is not valid (TokenReview). */
  Optional<Identity> authenticate(String token);

  /**
   * Whether the caller may {@code create} {@code backendpools/outcomes} of this pool in the pool's
   * namespace (SubjectAccessReview).
   */
  boolean mayReport(Identity caller, PoolKey pool);
}
