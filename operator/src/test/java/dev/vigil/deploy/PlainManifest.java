package dev.vigil.deploy;

/**
 * {@code deploy/manifests/vigil.yaml}: the chart rendered with its default values, for installs
 * without Helm. The CRDs stay in {@code crds/}, applied first.
 */
final class PlainManifest {
  static final String PATH = "deploy/manifests/vigil.yaml";
  static final String REGENERATE =
      "mvn -B -pl operator test -Dtest=PlainManifestTest -Dvigil.deploy.regenerate=true";

  private static final String HEADER =
      """
      # Vigil: plain install, rendered from the Helm chart deploy/helm/vigil with default values
      # (release "%s", namespace "%s"). Do not edit: PlainManifestTest fails when this file
      # and the chart differ.
      #
      # Install:    kubectl apply --server-side -f crds/
      #             kubectl apply -f deploy/manifests/vigil.yaml
      # Regenerate: %s
      ---
      apiVersion: v1
      kind: Namespace
      metadata:
        name: %s
        labels:
          # The operator Pod meets the restricted Pod Security Standard.
          pod-security.kubernetes.io/enforce: restricted
      """;

  private PlainManifest() {}

  static String render(VigilChart chart) {
    String header =
        HEADER.formatted(
            VigilChart.RELEASE, VigilChart.NAMESPACE, REGENERATE, VigilChart.NAMESPACE);
    return header + chart.template("").stripTrailing() + "\n";
  }
}
