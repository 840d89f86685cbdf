package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The README's kubectl install, run as written on the real control plane (issue 36: the TLS Secret
 * step was only a comment in the manifest, nothing said how to use one's own image, and a
 * hand-started operator elected itself on another Lease and wrote beside the installed one).
 *
 * <ol>
 *   <li>The chart the other E2E classes share is uninstalled, so the story starts from a cluster
 *       without Vigil (the CRDs stay, as a reader's second install would find them).
 *   <li>The block between {@code <!-- install-kubectl -->} markers in README.md runs with bash, in
 *       a directory where {@code crds/} and {@code deploy/} are the repository's, with the control
 *       plane's kubectl on the PATH; docs/install.md shows the same block.
 *   <li>The Deployment the API server now holds runs as its Pod would (its args and env, the
 *       ServiceAccount's token, the Secret's certificate): it becomes ready and leads.
 *   <li>An operator started as the README says for a laptop ({@code operator --outcome-port -1},
 *       the admin kubeconfig, no Lease flag) stands by behind it.
 * </ol>
 *
 * Afterwards everything the story made is deleted (not the namespace) and the chart installed again
 * for the classes that run later.
 */
class InstallStoryE2E {
  private static final String START = "<!-- install-kubectl -->";
  private static final String END = "<!-- /install-kubectl -->";

  private E2eCluster cluster;
  private Path dir;
  private final List<ProcessOperator> operators = new ArrayList<>();
  private Process laptop;

  @BeforeEach
  void setUp() throws IOException {
    cluster = E2eCluster.get();
    cluster.applyCrds();
    cluster.uninstallChart();
    dir = Files.createTempDirectory("vigil-install-story");
    Files.createSymbolicLink(dir.resolve("crds"), cluster.path("crds"));
    Files.createSymbolicLink(dir.resolve("deploy"), cluster.path("deploy"));
  }

  @AfterEach
  void tearDown() throws IOException {
    try {
      if (laptop != null) {
        laptop.destroy();
        laptop.waitFor(30, TimeUnit.SECONDS);
        laptop.destroyForcibly();
      }
      for (ProcessOperator o : operators) {
        try {
          o.close();
        } finally {
          o.keepLogAndDeleteFiles(Path.of("target", "e2e-logs", "InstallStoryE2E"));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      // the manifest's objects but its Namespace (it would never go), then the chart again
      String manifest = Files.readString(cluster.path("deploy/manifests/vigil.yaml"));
      String withoutNamespace =
          String.join(
              "\n---\n",
              java.util.Arrays.stream(manifest.split("(?m)^---$"))
                  .filter(doc -> !doc.contains("\nkind: Namespace\n"))
                  .toList());
      cluster.kubectlIn(
          withoutNamespace, "delete", "--ignore-not-found", "--wait=false", "-f", "-");
      cluster.kubectl(
          "-n",
          E2eCluster.RELEASE_NAMESPACE,
          "delete",
          "secret",
          "vigil-tls",
          "--ignore-not-found");
      cluster
          .admin()
          .resources(Lease.class)
          .inNamespace(E2eCluster.RELEASE_NAMESPACE)
          .withName("vigil")
          .delete();
      cluster.installChart();
    }
  }

  static String block(String markdown, String source) {
    int start = markdown.indexOf(START);
    int end = markdown.indexOf(END);
    assertThat(start).as("%s marks its kubectl install with %s", source, START).isNotNegative();
    assertThat(end).as("%s ends it with %s", source, END).isGreaterThan(start);
    Matcher code = Pattern.compile("(?s)```\\n(.*?)```").matcher(markdown.substring(start, end));
    assertThat(code.find()).as("a code block between the markers in %s", source).isTrue();
    return code.group(1);
  }

  @Test
  void theReadmesKubectlInstallRunsAsWrittenAndAHandStartedOperatorStandsBy() throws Exception {
    String readme = Files.readString(cluster.path("README.md"));
    String commands = block(readme, "README.md");
    assertThat(block(Files.readString(cluster.path("docs/install.md")), "docs/install.md"))
        .as("docs/install.md shows the README's block")
        .isEqualTo(commands);
    Matcher imageLine = Pattern.compile("(?m)^IMAGE=(\\S+)").matcher(commands);
    assertThat(imageLine.find()).as("the block names the image in IMAGE=").isTrue();
    String image = imageLine.group(1);

    Path script = dir.resolve("install.sh");
    Files.writeString(
        script,
        "cd '"
            + dir
            + "'\nexport PATH='"
            + Path.of(cluster.kubectl()).getParent()
            + "'"
            + File.pathSeparator
            + "\"$PATH\"\n"
            + commands);
    E2eCluster.Result ran =
        cluster.run(
            Duration.ofSeconds(120), null, "bash", "-eu", "-o", "pipefail", script.toString());
    assertThat(ran.exit())
        .as("the README's block:%n%s%nout:%n%s%nerr:%n%s", commands, ran.out(), ran.err())
        .isZero();

    Deployment deployment =
        cluster
            .admin()
            .apps()
            .deployments()
            .inNamespace(E2eCluster.RELEASE_NAMESPACE)
            .withName("vigil")
            .get();
    assertThat(deployment).as("the Deployment the block applied").isNotNull();
    assertThat(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .as("the image the block points the Deployment at")
        .isEqualTo(image);
    Secret tls =
        cluster
            .admin()
            .secrets()
            .inNamespace(E2eCluster.RELEASE_NAMESPACE)
            .withName("vigil-tls")
            .get();
    assertThat(tls).as("the Secret the Deployment mounts").isNotNull();
    assertThat(tls.getType()).isEqualTo("kubernetes.io/tls");

    // The Deployment's Pod, as a kubelet would run it.
    String pod = "vigil-7c9d5-story";
    ProcessOperator installed =
        ProcessOperator.startFromDeployment(
            deployment,
            pod,
            ProcessOperator.serviceAccountToken(cluster),
            Base64.getDecoder().decode(tls.getData().get("tls.crt")),
            Base64.getDecoder().decode(tls.getData().get("tls.key")));
    operators.add(installed);
    installed.awaitReady(Duration.ofSeconds(90));
    await().atMost(Duration.ofSeconds(30)).until(() -> pod.equals(holder()));

    // The README's laptop command, against the same cluster with the admin's kubeconfig.
    Path laptopLog = dir.resolve("laptop.log");
    ProcessBuilder pb =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                ProcessOperator.operatorClasspath(),
                "dev.vigil.cli.Main",
                "operator",
                "--outcome-port",
                "-1",
                "--metrics-port",
                "0",
                "--health-port",
                "-1")
            .redirectErrorStream(true)
            .redirectOutput(laptopLog.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("VIGIL_") || k.startsWith("KUBERNETES_"));
    pb.environment().put("KUBECONFIG", System.getenv("VIGIL_E2E_KUBECONFIG"));
    pb.environment().put("HOSTNAME", "laptop");
    laptop = pb.start();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              String out = Files.readString(laptopLog);
              // the manifests run sharded replicas: a hand-started one waits for their shard
              // Leases to go before it stands for the Lease they elect their sharder with
              return out.contains("a sharded Vigil runs in " + E2eCluster.RELEASE_NAMESPACE)
                  || out.contains("leader is " + pod);
            });
    Thread.sleep(3_000);
    String laptopOut = Files.readString(laptopLog);
    assertThat(laptop.isAlive()).as("the laptop operator runs:%n%s", laptopOut).isTrue();
    assertThat(holder()).as("the Lease stays with the installed replica").isEqualTo(pod);
    assertThat(laptopOut)
        .as("the laptop operator stands by")
        .doesNotContain("leading: probing and publishing");
  }

  private String holder() {
    return cluster.leaseHolder("vigil");
  }
}
