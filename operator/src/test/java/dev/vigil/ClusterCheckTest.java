package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.testing.LoopbackSockets;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The API check at start answers within its deadline and names the server and the cause. */
class ClusterCheckTest {
  /** The deadline {@code vigil operator} uses; the issue asks for an answer within 10 s. */
  private static final Duration DEADLINE = Duration.ofSeconds(5);

  private static final String VERSION =
      "{\"major\":\"1\",\"minor\":\"31\",\"gitVersion\":\"v1.31.0\",\"platform\":\"linux/amd64\"}";

  private KubernetesMockServer server;

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.destroy();
    }
  }

  private static Config at(String url) {
    return new ConfigBuilder(Config.empty()).withMasterUrl(url).build();
  }

  /** A mock API server that answers /version and lists no HealthPolicies. */
  private void serverWithPolicies() {
    server = new KubernetesMockServer(false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    server.expect().get().withPath("/version").andReturn(200, VERSION).always();
    server
        .expect()
        .get()
        .withPath("/apis/vigil.dev/v1alpha1/healthpolicies?limit=1")
        .andReturn(200, emptyPolicies())
        .always();
  }

  private static Optional<ClusterCheck.Failure> check(Config config, OperatorConfig settings) {
    return new ClusterCheck(config, "kubeconfig /tmp/k, context test", settings, DEADLINE).run();
  }

  @Test
  void aClosedPortIsNamedWithTheServerAndTheCause() throws Exception {
    int port = LoopbackSockets.closedPort();
    String url = "https://127.0.0.1:" + port;
    long start = System.nanoTime();

    Optional<ClusterCheck.Failure> failure = check(at(url), OperatorConfig.embedded());

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(failure).isPresent();
    String message = failure.get().message();
    assertThat(message)
        .contains("cannot reach the Kubernetes API server at " + url)
        .contains("kubeconfig /tmp/k, context test")
        .containsIgnoringCase("connection refused");
    assertThat(message.lines()).hasSizeBetween(1, 2);
  }

  @Test
  void aServerThatNeverAnswersIsGivenUpOnAtTheDeadline() throws Exception {
    // The kernel completes the TCP handshake from the backlog; nothing ever reads or writes.
    try (ServerSocket silent = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
      String url = "https://127.0.0.1:" + silent.getLocalPort();
      long start = System.nanoTime();

      Optional<ClusterCheck.Failure> failure = check(at(url), OperatorConfig.embedded());

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
      assertThat(failure).isPresent();
      assertThat(failure.get().message()).contains(url).containsAnyOf("no answer", "timed out");
      assertThat(failure.get().message().lines()).hasSizeBetween(1, 2);
    }
  }

  @Test
  void aMissingCrdNamesTheCommandThatInstallsIt() {
    serverWithPolicies();

    Optional<ClusterCheck.Failure> failure =
        check(server.createClient().getConfiguration(), OperatorConfig.embedded());

    assertThat(failure).isPresent();
    assertThat(failure.get().message())
        .contains("has no backendpools.vigil.dev")
        .contains("kubectl apply --server-side -f crds/");
  }

  @Test
  void passesWhenTheCrdsAreServedAndSaysWhenTheLeaseNamespaceIsMissing() {
    serverWithPolicies();
    server
        .expect()
        .get()
        .withPath("/apis/vigil.dev/v1alpha1/backendpools?limit=1")
        .andReturn(200, emptyPools())
        .always();
    Config config = server.createClient().getConfiguration();

    assertThat(check(config, OperatorConfig.embedded())).isEmpty();

    OperatorConfig elected =
        OperatorConfig.embedded(
            "--leader-election=true",
            "--lease-name=vigil-leader",
            "--lease-namespace=vigil-system");
    Optional<ClusterCheck.Failure> failure = check(config, elected);
    assertThat(failure).isPresent();
    assertThat(failure.get().message())
        .contains("namespace vigil-system for the leader-election Lease does not exist")
        .contains("--lease-namespace");
  }

  @Test
  void theSourceNamesTheKubeconfigOrSaysThereIsNone() {
    assertThat(ClusterCheck.source(Config.empty(), Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1")))
        .isEqualTo("in-cluster ServiceAccount");
    assertThat(ClusterCheck.source(Config.empty(), Map.of()))
        .startsWith("no kubeconfig at ")
        .endsWith(" and not in a cluster");
  }

  @Test
  void aPodWaitsLongerForTheApiServerThanAPersonAtATerminal(@TempDir Path dir) throws Exception {
    Map<String, String> pod = Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    assertThat(ClusterCheck.deadline(Config.empty(), pod)).isEqualTo(Duration.ofSeconds(30));
    assertThat(ClusterCheck.deadline(Config.empty(), Map.of())).isEqualTo(Duration.ofSeconds(5));
    Path kubeconfig = dir.resolve("config");
    Files.writeString(
        kubeconfig,
        """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
        users: [{name: u, user: {token: t}}]
        contexts: [{name: x, context: {cluster: c, user: u}}]
        current-context: x
        """);
    Config fromFile = Config.fromKubeconfig(kubeconfig.toFile());
    assertThat(ClusterCheck.deadline(fromFile, pod))
        .as("an explicit kubeconfig wins over the Pod's environment, as it does for the client")
        .isEqualTo(Duration.ofSeconds(5));
  }

  private static String emptyPolicies() {
    return "{\"apiVersion\":\"vigil.dev/v1alpha1\",\"kind\":\"HealthPolicyList\","
        + "\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}";
  }

  private static String emptyPools() {
    return "{\"apiVersion\":\"vigil.dev/v1alpha1\",\"kind\":\"BackendPoolList\","
        + "\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}";
  }
}
