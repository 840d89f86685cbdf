package dev.vigil.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Helm chart in {@code deploy/helm/vigil}, linted and rendered offline with helm-java (the helm
 * library runs in-process; no cluster, no helm binary).
 */
final class VigilChart {
  static final String RELEASE = "vigil";
  static final String NAMESPACE = "vigil-system";

  /** Helm's default (v1.20) is below the chart's kubeVersion; render for a supported release. */
  static final String KUBE_VERSION = "v1.30.0";

  private final Path repoRoot;

  private VigilChart(Path repoRoot) {
    this.repoRoot = repoRoot;
  }

  /** Finds the repository from the working directory (Maven runs tests in {@code operator/}). */
  static VigilChart locate() {
    Path dir = Path.of("").toAbsolutePath();
    for (Path p = dir; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("deploy/helm/vigil/Chart.yaml"))) {
        return new VigilChart(p);
      }
    }
    throw new IllegalStateException("no deploy/helm/vigil/Chart.yaml above " + dir);
  }

  Path repoRoot() {
    return repoRoot;
  }

  Path chartDir() {
    return repoRoot.resolve("deploy/helm/vigil");
  }

  LintResult lint() {
    return new Helm(chartDir()).lint().strict().call();
  }

  /** The NOTES.txt text {@code helm install} prints, from a client-only dry run. */
  String installNotes() {
    String output =
        new Helm(chartDir())
            .install()
            .withName(RELEASE)
            .withNamespace(NAMESPACE)
            .withKubeVersion(KUBE_VERSION)
            .clientOnly()
            .dryRun()
            .call()
            .getOutput();
    int notes = output.indexOf("NOTES:");
    return notes < 0 ? "" : output.substring(notes);
  }

  /** Renders the templates (not {@code crds/}) as {@code helm template} does. */
  String template(String valuesYaml) {
    TemplateCommand command =
        new Helm(chartDir())
            .template()
            .withName(RELEASE)
            .withNamespace(NAMESPACE)
            .withKubeVersion(KUBE_VERSION);
    if (valuesYaml.isBlank()) {
      return command.call();
    }
    Path values = null;
    try {
      values = Files.createTempFile("vigil-values", ".yaml");
      Files.writeString(values, valuesYaml);
      return command.withValuesFile(values).call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteQuietly(values);
    }
  }

  RenderedChart render(String valuesYaml) {
    return RenderedChart.parse(template(valuesYaml));
  }

  private static void deleteQuietly(Path file) {
    if (file == null) {
      return;
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // a leftover temp file is harmless
    }
  }
}
