package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.testing.LoopbackSockets;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigil} as a new user runs it, in a JVM of its own: the exit code, what it prints, and how
 * long it takes when there is no cluster (a kubeconfig naming a closed loopback port).
 */
class OperatorStartTest {
  @TempDir Path home;

  private record Run(int exit, String out, String err, Duration took) {}

  private Run vigil(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(dev.vigil.cli.Main.class.getName());
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("KUBERNETES_SERVICE_HOST");
    pb.environment().remove("KUBECONFIG");
    pb.environment().put("HOME", home.toString());
    pb.environment().putAll(env);
    Path out = home.resolve("out");
    Path err = home.resolve("err");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    long start = System.nanoTime();
    Process p = pb.start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("vigil " + String.join(" ", args) + " did not exit in 60 s");
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    return new Run(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8),
        took);
  }

  private Path kubeconfig(String server) throws IOException {
    Path file = home.resolve("kubeconfig");
    Files.writeString(
        file,
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: nowhere
          cluster:
            server: %s
        contexts:
        - name: nowhere
          context:
            cluster: nowhere
            user: nobody
        current-context: nowhere
        users:
        - name: nobody
          user:
            token: not-a-token
        """
            .formatted(server));
    return file;
  }

  @Test
  void withoutAClusterItExitsWithinTenSecondsNamingKubeconfigServerAndCause() throws Exception {
    int port = LoopbackSockets.closedPort();
    String url = "https://127.0.0.1:" + port;
    Path config = kubeconfig(url);

    Run run =
        vigil(
            Map.of("KUBECONFIG", config.toString()),
            "operator",
            "--metrics-port=0",
            "--outcome-port=-1");

    assertThat(run.exit()).as(run.err()).isEqualTo(1);
    assertThat(run.took()).isLessThan(Duration.ofSeconds(10));
    assertThat(run.err())
        .contains(config.toString())
        .contains("context nowhere")
        .contains(url)
        .containsIgnoringCase("connection refused");
    assertThat(run.err().lines()).hasSizeBetween(1, 2);
    assertThat(run.out() + run.err()).doesNotContain("\tat ").doesNotContain("Exception:");
  }

  @Test
  void theDebugFlagAddsTheStackTrace() throws Exception {
    int port = LoopbackSockets.closedPort();
    Path config = kubeconfig("https://127.0.0.1:" + port);

    Run run =
        vigil(Map.of("KUBECONFIG", config.toString()), "operator", "--debug", "--outcome-port=-1");

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.err()).contains("cannot reach the Kubernetes API server").contains("\tat ");
  }

  @Test
  void theJarsEntryPointExitsZeroOnHelpAndVersionAndTwoWithNoCommand() throws Exception {
    Run help = vigil(Map.of(), "--help");
    assertThat(help.exit()).isZero();
    assertThat(help.out()).startsWith("usage: vigil <command>");

    Run version = vigil(Map.of(), "--version");
    assertThat(version.exit()).isZero();
    assertThat(version.out()).matches("vigil \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\n");

    Run none = vigil(Map.of());
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.out()).isEmpty();
    assertThat(none.err()).contains("usage: vigil <command>");
  }
}
