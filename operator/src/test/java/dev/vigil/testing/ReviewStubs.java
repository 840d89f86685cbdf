package dev.vigil.testing;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.function.Function;

/**
 * A Fabric8 mock server that answers TokenReviews and SubjectAccessReviews as a test decides: the
 * review posted goes to {@code answer}, and comes back with the status it returns.
 */
public final class ReviewStubs {
  private ReviewStubs() {}

  public static void tokenReviews(
      KubernetesMockServer server, Function<TokenReview, TokenReviewStatus> answer) {
    server
        .expect()
        .post()
        .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(
            201,
            request -> {
              TokenReview review =
                  Serialization.unmarshal(request.getUtf8Body(), TokenReview.class);
              review.setStatus(answer.apply(review));
              return review;
            })
        .always();
  }

  public static void accessReviews(
      KubernetesMockServer server,
      Function<SubjectAccessReview, SubjectAccessReviewStatus> answer) {
    server
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews")
        .andReply(
            201,
            request -> {
              SubjectAccessReview review =
                  Serialization.unmarshal(request.getUtf8Body(), SubjectAccessReview.class);
              review.setStatus(answer.apply(review));
              return review;
            })
        .always();
  }
}
