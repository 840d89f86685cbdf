package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Dockerfile in step with the chart, and buildable on a base without a shell. ImageE2E builds
 * and runs the image itself (deploy/image/build.sh).
 */
class DockerfileTest {

  @Test
  void runsTheFatJarAsTheNonRootUserTheChartExpects() throws IOException {
    VigilChart vigil = VigilChart.locate();
    List<String> lines = Files.readAllLines(vigil.repoRoot().resolve("Dockerfile"));
    long chartUser =
        vigil
            .render("")
            .one(Deployment.class)
            .getSpec()
            .getTemplate()
            .getSpec()
            .getSecurityContext()
            .getRunAsUser();

    assertThat(lines).contains("ARG BASE=eclipse-temurin:17-jre", "FROM ${BASE}");
    assertThat(lines)
        .as("a RUN needs a shell; the local base has none")
        .noneMatch(l -> l.startsWith("RUN"));
    assertThat(lines)
        .contains("COPY operator/target/vigil-operator.jar /app/vigil-operator.jar")
        .contains("ENTRYPOINT [\"java\", \"-jar\", \"/app/vigil-operator.jar\"]")
        .contains("CMD [\"operator\"]");
    List<String> users = lines.stream().filter(l -> l.startsWith("USER ")).toList();
    assertThat(users).singleElement().isEqualTo("USER " + chartUser + ":" + chartUser);
    assertThat(chartUser).isNotZero();
  }
}
