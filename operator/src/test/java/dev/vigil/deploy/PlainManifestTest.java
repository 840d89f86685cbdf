package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The committed plain manifest equals the chart rendered with default values. Regenerate with
 * {@value PlainManifest#REGENERATE}.
 */
class PlainManifestTest {

  @Test
  void isInStepWithTheChart() throws IOException {
    VigilChart chart = VigilChart.locate();
    String rendered = PlainManifest.render(chart);
    Path committed = chart.repoRoot().resolve(PlainManifest.PATH);
    if (Boolean.getBoolean("vigil.deploy.regenerate")) {
      Files.createDirectories(committed.getParent());
      Files.writeString(committed, rendered);
    }

    assertThat(committed).exists();
    assertThat(Files.readString(committed))
        .as("%s is stale; regenerate it with: %s", PlainManifest.PATH, PlainManifest.REGENERATE)
        .isEqualTo(rendered);
  }

  @Test
  void createsItsNamespaceBeforeTheOperator() {
    RenderedChart manifest = RenderedChart.parse(PlainManifest.render(VigilChart.locate()));
    assertThat(manifest.objects().get(0)).isInstanceOf(Namespace.class);
    assertThat(manifest.one(Namespace.class).getMetadata().getName())
        .isEqualTo(VigilChart.NAMESPACE);
    assertThat(manifest.one(Deployment.class).getMetadata().getNamespace())
        .isEqualTo(VigilChart.NAMESPACE);
  }
}
