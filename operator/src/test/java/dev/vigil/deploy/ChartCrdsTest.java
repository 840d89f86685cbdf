package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The chart's {@code crds/} holds exactly the generated CRDs of the repository's {@code crds/},
 * byte for byte. Copy them with {@code cp crds/*.yml deploy/helm/vigil/crds/}, or run this test
 * with {@code -Dvigil.deploy.regenerate=true}.
 */
class ChartCrdsTest {

  @Test
  void holdsTheGeneratedCrds() throws IOException {
    VigilChart chart = VigilChart.locate();
    Path generated = chart.repoRoot().resolve("crds");
    Path packaged = chart.chartDir().resolve("crds");
    assumeTrue(Files.isDirectory(generated), "crds/ is not generated yet");
    List<String> generatedNames = manifests(generated);
    assertThat(generatedNames).as("CRD files in %s", generated).isNotEmpty();
    if (Boolean.getBoolean("vigil.deploy.regenerate")) {
      for (String stale : manifests(packaged)) {
        Files.delete(packaged.resolve(stale));
      }
      for (String name : generatedNames) {
        Files.copy(generated.resolve(name), packaged.resolve(name));
      }
    }

    assertThat(manifests(packaged))
        .as("CRD files in deploy/helm/vigil/crds; copy them: cp crds/*.yml deploy/helm/vigil/crds/")
        .containsExactlyElementsOf(generatedNames);
    for (String name : generatedNames) {
      assertThat(Files.readString(packaged.resolve(name)))
          .as("deploy/helm/vigil/crds/%s differs from crds/%s", name, name)
          .isEqualTo(Files.readString(generated.resolve(name)));
    }
  }

  /** The files Helm installs from a crds/ folder, sorted by name. */
  private static List<String> manifests(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(n -> n.endsWith(".yml") || n.endsWith(".yaml") || n.endsWith(".json"))
          .sorted()
          .toList();
    }
  }
}
