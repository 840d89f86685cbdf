package dev.vigil.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.testing.ReviewStubs;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewSpec;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The TokenReview asks for Vigil's audience, and a review that authenticates the token for other
 * audiences only (or says nothing about audiences) does not count; the metrics port's reviewer asks
 * for the API server's own audience.
 */
class Fabric8ReviewerTest {
  /** token -> the audiences the API server answers with (authenticated in every case). */
  private static final Map<String, List<String>> ANSWERS =
      Map.of(
          "projected", List.of("vigil.dev"),
          "api", List.of("https://kubernetes.default.svc"),
          "silent", List.of());

  private final List<List<String>> asked = new CopyOnWriteArrayList<>();
  private final List<SubjectAccessReviewSpec> access = new CopyOnWriteArrayList<>();
  private KubernetesMockServer server;
  private KubernetesClient client;

  @BeforeEach
  void setUp() {
    server = new KubernetesMockServer(false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    ReviewStubs.tokenReviews(
        server,
        review -> {
          asked.add(review.getSpec().getAudiences());
          return new TokenReviewStatusBuilder()
              .withAuthenticated(true)
              .withAudiences(ANSWERS.get(review.getSpec().getToken()))
              .withNewUser()
              .withUsername("system:serviceaccount:shop:envoy")
              .endUser()
              .build();
        });
    ReviewStubs.accessReviews(
        server,
        review -> {
          access.add(review.getSpec());
          return new SubjectAccessReviewStatusBuilder()
              .withAllowed("system:serviceaccount:shop:envoy".equals(review.getSpec().getUser()))
              .build();
        });
    client = server.createClient();
  }

  @AfterEach
  void tearDown() {
    client.close();
    server.destroy();
  }

  @Test
  void acceptsOnlyTokensTheApiServerAuthenticatedForVigilsAudience() {
    Fabric8Reviewer reviewer =
        Fabric8Reviewer.forAudience(client, Fabric8Reviewer.DEFAULT_AUDIENCE);

    assertThat(reviewer.authenticate("projected")).isPresent();
    assertThat(reviewer.authenticate("api")).as("an API-server token").isEmpty();
    assertThat(reviewer.authenticate("silent")).as("no audience confirmed").isEmpty();
    assertThat(asked).hasSize(3).allSatisfy(a -> assertThat(a).containsExactly("vigil.dev"));
  }

  @Test
  void asksForTheConfiguredAudience() {
    assertThat(Fabric8Reviewer.forAudience(client, "intake.example").authenticate("projected"))
        .isEmpty();
    assertThat(asked)
        .singleElement()
        .satisfies(a -> assertThat(a).containsExactly("intake.example"));
  }

  @Test
  void theApiServersAudienceSendsNoneAndAcceptsAnyAuthenticatedToken() {
    Fabric8Reviewer reviewer = Fabric8Reviewer.forApiServer(client);

    assertThat(reviewer.authenticate("api")).isPresent();
    assertThat(reviewer.authenticate("silent")).isPresent();
    assertThat(asked).hasSize(2).allSatisfy(a -> assertThat(a).isNullOrEmpty());
  }

  @Test
  void refusesABlankAudience() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> Fabric8Reviewer.forAudience(client, " "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("audience");
  }

  @Test
  void asksToReportOutcomesAsAResourceAndToReadMetricsAsAPath() {
    Fabric8Reviewer reviewer =
        Fabric8Reviewer.forAudience(client, Fabric8Reviewer.DEFAULT_AUDIENCE);
    Identity envoy =
        new Identity(
            "system:serviceaccount:shop:envoy",
            "uid-1",
            List.of("system:serviceaccounts"),
            Map.of("scope", List.of("a")));

    assertThat(reviewer.allows(envoy, Permission.reportOutcomes("shop", "web"))).isTrue();
    assertThat(reviewer.allows(envoy, Permission.READ_METRICS)).isTrue();
    assertThat(
            reviewer.allows(new Identity("someone", "uid-2", null, null), Permission.READ_METRICS))
        .isFalse();

    assertThat(access).hasSize(3);
    var outcomes = access.get(0);
    assertThat(outcomes.getUser()).isEqualTo("system:serviceaccount:shop:envoy");
    assertThat(outcomes.getUid()).isEqualTo("uid-1");
    assertThat(outcomes.getGroups()).containsExactly("system:serviceaccounts");
    assertThat(outcomes.getExtra()).containsEntry("scope", List.of("a"));
    assertThat(outcomes.getNonResourceAttributes()).isNull();
    var r = outcomes.getResourceAttributes();
    assertThat(
            List.of(
                r.getVerb(),
                r.getGroup(),
                r.getResource(),
                r.getSubresource(),
                r.getNamespace(),
                r.getName()))
        .containsExactly("create", "vigil.dev", "backendpools", "outcomes", "shop", "web");

    var metrics = access.get(1);
    assertThat(metrics.getResourceAttributes()).isNull();
    assertThat(metrics.getNonResourceAttributes().getVerb()).isEqualTo("get");
    assertThat(metrics.getNonResourceAttributes().getPath()).isEqualTo("/metrics");
  }
}
