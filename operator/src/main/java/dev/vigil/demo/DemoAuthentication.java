package dev.vigil.demo;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributes;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * Makes the embedded API server answer TokenReviews and SubjectAccessReviews as a cluster with the
 * Helm chart installed would: one ServiceAccount token (the demo reporter's, a projected token for
 * the audience {@code vigil.dev}) authenticates for that audience only, and that ServiceAccount may
 * {@code create backendpools/outcomes} in its own namespace only (the chart's {@code
 * vigil-outcome-reporter} ClusterRole bound there). Every other token or request is refused, so the
 * intake's checks are exercised for real.
 */
public final class DemoAuthentication {
  /** The audience the reporter's token was minted for (the operator's default). */
  static final String AUDIENCE = "vigil.dev";

  private final String namespace;
  private final String serviceAccount;
  private final String token;

  public DemoAuthentication(String namespace, String serviceAccount) {
    this.namespace = namespace;
    this.serviceAccount = serviceAccount;
    byte[] random = new byte[16]; // 128 bits; its export line fits 80 columns
    new SecureRandom().nextBytes(random);
    this.token = "demo." + HexFormat.of().formatHex(random);
  }

  /** The reporter's bearer token. */
  public String token() {
    return token;
  }

  /** The reporter's user name, as a TokenReview reports it. */
  public String user() {
    return "system:serviceaccount:" + namespace + ":" + serviceAccount;
  }

  /** Installs the review answers on the server (before the operator starts). */
  public void install(KubernetesMockServer server) {
    server
        .expect()
        .post()
        .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(201, request -> tokenReview(request.getUtf8Body()))
        .always();
    server
        .expect()
        .post()
        .withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews")
        .andReply(201, request -> accessReview(request.getUtf8Body()))
        .always();
  }

  TokenReview tokenReview(String body) {
    TokenReview review = Serialization.unmarshal(body, TokenReview.class);
    // The reporter's token is a projected one, minted for Vigil's audience only (docs/design.md
    // §4).
    boolean ok =
        review.getSpec() != null
            && token.equals(review.getSpec().getToken())
            && review.getSpec().getAudiences() != null
            && review.getSpec().getAudiences().contains(AUDIENCE);
    review.setStatus(
        ok
            ? new TokenReviewStatusBuilder()
                .withAuthenticated(true)
                .withAudiences(AUDIENCE)
                .withNewUser()
                .withUsername(user())
                .withUid("uid-" + serviceAccount)
                .withGroups(
                    List.of(
                        "system:serviceaccounts",
                        "system:serviceaccounts:" + namespace,
                        "system:authenticated"))
                .endUser()
                .build()
            : new TokenReviewStatusBuilder()
                .withAuthenticated(false)
                .withError("invalid bearer token")
                .build());
    return review;
  }

  SubjectAccessReview accessReview(String body) {
    SubjectAccessReview review = Serialization.unmarshal(body, SubjectAccessReview.class);
    ResourceAttributes a =
        review.getSpec() == null ? null : review.getSpec().getResourceAttributes();
    boolean allowed =
        a != null
            && user().equals(review.getSpec().getUser())
            && "create".equals(a.getVerb())
            && "vigil.dev".equals(a.getGroup())
            && "backendpools".equals(a.getResource())
            && "outcomes".equals(a.getSubresource())
            && namespace.equals(a.getNamespace());
    review.setStatus(
        new SubjectAccessReviewStatusBuilder()
            .withAllowed(allowed)
            .withReason(
                allowed
                    ? "RBAC: allowed by RoleBinding vigil-outcome-reporter/" + namespace
                    : "no RBAC policy matched")
            .build());
    return review;
  }
}
