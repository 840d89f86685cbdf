package dev.vigil.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
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
  private KubernetesMockServer server;
  private KubernetesClient client;

  @BeforeEach
  void setUp() {
    server = new KubernetesMockServer(false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    server
        .expect()
        .post()
        .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(
            201,
            request -> {
              TokenReview review =
                  Serialization.unmarshal(request.getUtf8Body(), TokenReview.class);
              asked.add(review.getSpec().getAudiences());
              review.setStatus(
                  new TokenReviewStatusBuilder()
                      .withAuthenticated(true)
                      .withAudiences(ANSWERS.get(review.getSpec().getToken()))
                      .withNewUser()
                      .withUsername("system:serviceaccount:shop:envoy")
                      .endUser()
                      .build());
              return review;
            })
        .always();
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
}
