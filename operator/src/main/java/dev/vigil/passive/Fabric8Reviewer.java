package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Optional;

/** TokenReview and SubjectAccessReview through the Fabric8 client. */
public final class Fabric8Reviewer implements Reviewer {
  /** The API group, resource and subresource reporters need {@code create} on. */
  public static final String GROUP = "vigil.dev";

  public static final String RESOURCE = "backendpools";
  public static final String SUBRESOURCE = "outcomes";
  public static final String VERB = "create";

  private final KubernetesClient client;

  public Fabric8Reviewer(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Optional<Identity> authenticate(String token) {
    TokenReview review =
        client
            .authentication()
            .v1()
            .tokenReviews()
            .create(new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build());
    if (review.getStatus() == null
        || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())
        || review.getStatus().getUser() == null) {
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
