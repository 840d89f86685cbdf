package dev.vigil.deploy;

/**
 * {@code deploy/manifests/vigil.yaml}: the chart rendered with its default values except the
 * outcome port's certificate (an existing Secret, not one generated into the file) and the
 * admission policy (always, since rendering offline cannot see the cluster's APIs), for installs
 * without Helm. The CRDs stay in {@code crds/}, applied first.
 */
final class PlainManifest {
  static final String PATH = "deploy/manifests/vigil.yaml";
  static final String REGENERATE =
      "mvn -B -pl operator test -Dtest=PlainManifestTest -Dvigil.deploy.regenerate=true";

  private static final String HEADER =
      """
      # Vigil: plain install, rendered from the Helm chart deploy/helm/vigil with default values,
      # outcomes.tls.mode=secret and admissionPolicy.enabled=true
      # (release "%s", namespace "%s"). Do not edit: PlainManifestTest fails when this file
      # and the chart differ.
      #
      # Install: README.md's kubectl block (your image in place of vigil-operator:0.1.0, which is
      # not published, and the Secret below); in short:
      #             kubectl apply --server-side -f crds/
      #             kubectl apply -f deploy/manifests/vigil.yaml
      #             kubectl -n %s create secret tls vigil-tls --cert=tls.crt --key=tls.key
      # The outcome port serves TLS only: its certificate (for vigil.%s.svc) comes from the
      # kubernetes.io/tls Secret vigil-tls, which you create (openssl, cert-manager, your CA); the
      # operator Pod starts once it exists, and picks up a replaced one without a restart.
      # The ValidatingAdmissionPolicy at the end needs Kubernetes 1.30+ (on older clusters, drop
      # its two objects).
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

  static final String VALUES =
      """
      outcomes:
        tls: {mode: secret, secretName: vigil-tls}
      admissionPolicy:
        enabled: true
      """;

  private PlainManifest() {}

  static String render(VigilChart chart) {
    String header =
        HEADER.formatted(
            VigilChart.RELEASE,
            VigilChart.NAMESPACE,
            VigilChart.NAMESPACE,
            VigilChart.NAMESPACE,
            REGENERATE,
            VigilChart.NAMESPACE);
    // Not the chart's self-signed default: a rendered file would carry a private key.
    return header + chart.template(VALUES).stripTrailing() + "\n";
  }
}
