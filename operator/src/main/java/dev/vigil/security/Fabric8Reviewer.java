package dev.vigil.security;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewSpecBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;

/**
 * TokenReview and SubjectAccessReview through the Fabric8 client (docs/design.md §4).
 *
 * <p>{@link #forAudience}: tokens are reviewed for one audience (the outcome intake's): the
 * TokenReview sends it in {@code spec.audiences} and a token counts only when {@code
 * status.audiences} contains it, so a token minted for the API server (or captured on its way to
 * Vigil and replayed elsewhere) is refused. {@link #forApiServer}: tokens for the API server's own
 * audience (the metrics port, as controller-runtime's secure metrics and kube-rbac-proxy do:
 * Prometheus sends its ServiceAccount token).
 */
public final class Fabric8Reviewer implements Reviewer {
  /**
   * The audience reporters' projected tokens must carry unless {@code --outcome-token-audience}.
   */
  public static final String DEFAULT_AUDIENCE = "vigil.dev";

  private final KubernetesClient client;

  /** The audience tokens must carry, or null for the API server's own. */
  private final String audience;

  private Fabric8Reviewer(KubernetesClient client, String audience) {
    this.client = client;
    this.audience = audience;
  }

  /** Reviews tokens for {@code audience}; a blank one is refused (it would accept any token). */
  public static Fabric8Reviewer forAudience(KubernetesClient client, String audience) {
    if (audience == null || audience.isBlank()) {
      throw new IllegalArgumentException("the token audience must not be blank");
    }
    return new Fabric8Reviewer(client, audience);
  }

  /** Reviews tokens for the API server's own audience. */
  public static Fabric8Reviewer forApiServer(KubernetesClient client) {
    return new Fabric8Reviewer(client, null);
  }

  @Override
  public Optional<Identity> authenticate(String token) {
    TokenReviewSpecBuilder spec = new TokenReviewSpecBuilder().withToken(token);
    if (audience != null) {
      spec.withAudiences(audience);
    }
    TokenReview review =
        client
            .authentication()
            .v1()
            .tokenReviews()
            .create(new TokenReviewBuilder().withSpec(spec.build()).build());
    if (review.getStatus() == null
        || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())
        || review.getStatus().getUser() == null
        || (audience != null
            && (review.getStatus().getAudiences() == null
                || !review.getStatus().getAudiences().contains(audience)))) {
      return Optional.empty();
    }
    UserInfo user = review.getStatus().getUser();
    return Optional.of(
        new Identity(user.getUsername(), user.getUid(), user.getGroups(), user.getExtra()));
  }

  @Override
  public boolean allows(Identity caller, Permission permission) {
    SubjectAccessReviewSpecBuilder spec =
        new SubjectAccessReviewSpecBuilder()
            .withUser(caller.username())
            .withUid(caller.uid())
            .withGroups(caller.groups())
            .withExtra(caller.extra().isEmpty() ? null : caller.extra());
    if (permission.nonResource()) {
      spec.withNewNonResourceAttributes()
          .withVerb(permission.verb())
          .withPath(permission.path())
          .endNonResourceAttributes();
    } else {
      spec.withNewResourceAttributes()
          .withVerb(permission.verb())
          .withGroup(permission.group())
          .withResource(permission.resource())
          .withSubresource(permission.subresource())
          .withNamespace(permission.namespace())
          .withName(permission.name())
          .endResourceAttributes();
    }
    SubjectAccessReview review =
        client
            .authorization()
            .v1()
            .subjectAccessReview()
            .create(new SubjectAccessReviewBuilder().withSpec(spec.build()).build());
    return review.getStatus() != null && Boolean.TRUE.equals(review.getStatus().getAllowed());
  }
}
