package dev.vigil.peer;

import dev.vigil.security.Identity;
import dev.vigil.security.Reviews;
import io.vertx.core.Future;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Who may call this replica as a peer (confirm a Down, take forwarded outcomes): a caller whose
 * token a TokenReview (the API server's own audience, the token every Vigil Pod has) finds to be
 * the very user this replica runs as, that is another replica of this installation. Answers cached
 * by {@link Reviews}.
 */
public final class PeerAuth {
  /** The source this replica's own token is reviewed under (never a caller's address). */
  private static final String SELF = "self";

  private final Reviews reviews;
  private final Supplier<String> ownToken;

  public PeerAuth(Reviews reviews, Supplier<String> ownToken) {
    this.reviews = reviews;
    this.ownToken = ownToken;
  }

  /** Whether {@code token} is this installation's ServiceAccount; fails when a review failed. */
  public Future<Boolean> isPeer(String token, String source) {
    return reviews
        .authenticate(token, source)
        .compose(
            caller -> {
              if (caller.isEmpty()) {
                return Future.succeededFuture(false);
              }
              String own = ownToken.get();
              if (own == null || own.isEmpty()) {
                return Future.succeededFuture(false);
              }
              return reviews.authenticate(own, SELF).map(me -> same(me, caller));
            });
  }

  private static boolean same(Optional<Identity> me, Optional<Identity> caller) {
    return me.isPresent() && me.get().username().equals(caller.get().username());
  }
}
