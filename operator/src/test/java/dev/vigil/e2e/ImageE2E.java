package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link OperatorE2E}'s every test with the operator run from the image ({@code VIGIL_E2E_IMAGE},
 * built by {@code deploy/image/build.sh}) as the chart's Deployment configures it: its args and
 * env, UID 10001, a read-only root filesystem with only the chart's {@code /tmp} emptyDir writable,
 * no capabilities, the ServiceAccount token mounted where the kubelet mounts it. Plus what the
 * image itself promises: non-root, no shell, ready within the chart's startup probe budget.
 */
class ImageE2E extends OperatorE2E {
  private static String image;

  @BeforeAll
  static void image() {
    cluster = E2eCluster.get();
    image = ContainerOperator.image();
    E2eCluster.require(
        image != null, "VIGIL_E2E_IMAGE is unset: build it with deploy/image/build.sh");
  }

  @Override
  protected RunningOperator startAs(String serviceAccount, String lease) {
    return ContainerOperator.start(cluster, serviceAccount, ns, lease);
  }

  @Test
  void theImageRunsAsItsNonRootUserWithNoShell() {
    String user =
        cluster
            .run(
                Duration.ofSeconds(30),
                null,
                podman("image", "inspect", "-f", "{{.Config.User}}", image))
            .assertOk()
            .out()
            .trim();
    assertThat(user).isEqualTo("10001:10001");
    E2eCluster.Result shell =
        cluster.run(
            Duration.ofSeconds(30),
            null,
            podman("run", "--rm", "--read-only", "--entrypoint", "/bin/sh", image, "-c", "true"));
    assertThat(shell.exit()).as("a shell in the image: %s", shell.err()).isNotZero();
    assertThat(shell.err()).contains("/bin/sh");
    E2eCluster.Result version =
        cluster
            .run(
                Duration.ofSeconds(60),
                null,
                podman("run", "--rm", "--read-only", image, "--version"))
            .assertOk();
    assertThat(version.out()).startsWith("vigil ");
  }

  /** Three starts, each ready before the chart's startup probe would give up on it. */
  @Test
  void startsReadyWithinTheChartsStartupProbeBudget() {
    Deployment chart = ContainerOperator.chartDeployment(cluster, List.of());
    var startup = chart.getSpec().getTemplate().getSpec().getContainers().get(0).getStartupProbe();
    long budgetMs = 1000L * startup.getPeriodSeconds() * startup.getFailureThreshold();
    List<Long> times = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try (ContainerOperator o = ContainerOperator.start(cluster, E2eCluster.RELEASE, ns, null)) {
        times.add(o.startToReadyMs());
      }
    }
    System.out.println(
        "image start-to-ready (podman run to /readyz 200), 3 starts: "
            + times
            + " ms, median "
            + times.stream().sorted().toList().get(1)
            + " ms");
    assertThat(times).allSatisfy(t -> assertThat(t).isLessThan(budgetMs));
  }

  private static String[] podman(String... args) {
    return ContainerOperator.podman(cluster, args);
  }
}
