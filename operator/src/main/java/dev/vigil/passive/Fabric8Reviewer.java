package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;

/**
 * TokenReview and SubjectAccessReview through the Fabric8 client. Tokens are reviewed for one
 * audience (docs/design.md §4): the TokenReview sends it in {@code spec.audiences} and a token
 * counts only when {@code status.audiences} contains it, so a token minted for the API server (or
 * captured on its way to Vigil and replayed elsewhere) is refused.
 */
public final class Fabric8Reviewer implements Reviewer {
  /**
   * The audience reporters' projected tokens must carry unless {@code --outcome-token-audience}.
   */
  public static final String DEFAULT_AUDIENCE = "vigil.dev";

  /** The API group, resource and subresource reporters need {@code create} on. */
  public static final String GROUP = "vigil.dev";

  public static final String RESOURCE = "backendpools";
  public static final String SUBRESOURCE = "outcomes";
  public static final String VERB = "create";

  private final KubernetesClient client;
  private final String audience;

  /** Reviews tokens for {@link #DEFAULT_AUDIENCE}. */
  public Fabric8Reviewer(KubernetesClient client) {
    this(client, DEFAULT_AUDIENCE);
  }

  public Fabric8Reviewer(KubernetesClient client, String audience) {
    if (audience == null || audience.isBlank()) {
      throw new IllegalArgumentException("the token audience must not be blank");
    }
    this.client = client;
    this.audience = audience;
  }

  @Override
  public Optional<Identity> authenticate(String token) {
    TokenReview review =
        client
            .authentication()
            .v1()
            .tokenReviews()
            .create(
                new TokenReviewBuilder()
                    .withNewSpec()
                    .withToken(token)
                    .withAudiences(audience)
                    .endSpec()
                    .build());
    if (review.getStatus() == null
        || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())
        || review.getStatus().getUser() == null
        || review.getStatus().getAudiences() == null
        || !review.getStatus().getAudiences().contains(audience)) {
      return Optional.empty();
    }
    UserInfo user = review.getStatus().getUser();
    return Optional.of(
        new Identity(user.getUsername(), user.getUid(), user.getGroups(), user.getExtra()));
  }

  @Override
  public boolean mayReport(Identity caller, PoolKey pool) {
    SubjectAccessReview review =
        client
            .authorization()
            .v1()
            .subjectAccessReview()
            .create(
                new SubjectAccessReviewBuilder()
                    .withNewSpec()
                    .withUser(caller.username())
                    .withUid(caller.uid())
                    .withGroups(caller.groups())
                    .withExtra(caller.extra().isEmpty() ? null : caller.extra())
                    .withNewResourceAttributes()
                    .withVerb(VERB)
                    .withGroup(GROUP)
                    .withResource(RESOURCE)
                    .withSubresource(SUBRESOURCE)
                    .withNamespace(pool.namespace())
                    .withName(pool.name())
                    .endResourceAttributes()
                    .endSpec()
                    .build());
    return review.getStatus() != null && Boolean.TRUE.equals(review.getStatus().getAllowed());
  }
}
