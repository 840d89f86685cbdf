package dev.vigil.ops;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Who may read {@code /metrics} when it is secured (docs/design.md §4, as controller-runtime's
 * secure metrics and kube-rbac-proxy do): the bearer token passes a TokenReview (the API server's
 * own audience: Prometheus sends its ServiceAccount token) and its user passes a
 * SubjectAccessReview for {@code get} on the non-resource URL {@code /metrics} (the chart's {@code
 * vigil-metrics-reader} ClusterRole grants it). Blocking: called on a worker thread.
 */
public interface MetricsAccess {
  /** The verdict on a token. */
  enum Verdict {
    ALLOWED,
    UNAUTHENTICATED,
    FORBIDDEN
  }

  Verdict check(String token);

  /** Through the Fabric8 client. */
  static MetricsAccess of(KubernetesClient client) {
    return token -> {
      TokenReview review =
          client
              .authentication()
              .v1()
              .tokenReviews()
              .create(new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build());
      if (review.getStatus() == null
          || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())
          || review.getStatus().getUser() == null) {
        return Verdict.UNAUTHENTICATED;
      }
      UserInfo user = review.getStatus().getUser();
      SubjectAccessReview access =
          client
              .authorization()
              .v1()
              .subjectAccessReview()
              .create(
                  new SubjectAccessReviewBuilder()
                      .withNewSpec()
                      .withUser(user.getUsername())
                      .withUid(user.getUid())
                      .withGroups(user.getGroups())
                      .withExtra(
                          user.getExtra() == null || user.getExtra().isEmpty()
                              ? null
                              : user.getExtra())
                      .withNewNonResourceAttributes()
                      .withVerb("get")
                      .withPath("/metrics")
                      .endNonResourceAttributes()
                      .endSpec()
                      .build());
      return access.getStatus() != null && Boolean.TRUE.equals(access.getStatus().getAllowed())
          ? Verdict.ALLOWED
          : Verdict.FORBIDDEN;
    };
  }
}
