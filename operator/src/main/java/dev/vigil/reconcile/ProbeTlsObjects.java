package dev.vigil.reconcile;

import java.util.Map;

/**
 * The ConfigMaps and Secrets a policy's {@code active.tls} may name, as the operator sees them:
 * only those labelled {@value #LABEL}{@code =true} (docs/security.md, "Probe TLS"), and no Secret
 * at all when the admin turned Secret reading off.
 */
public interface ProbeTlsObjects {
  /** The label that lets Vigil read a ConfigMap or Secret for probe TLS. */
  String LABEL = "vigil.dev/probe-tls";

  /** The data of the labelled ConfigMap {@code namespace/name}, or null when there is none. */
  Map<String, String> configMap(String namespace, String name);

  /**
   * The data of the labelled Secret {@code namespace/name}, each value decoded from base64, or null
   * when there is none.
   */
  Map<String, String> secret(String namespace, String name);

  /** Whether this operator reads Secrets at all ({@code --probe-tls-secrets}). */
  boolean secretsReadable();

  /** Sees nothing (a resolve without the cluster's objects, as in the demo and unit tests). */
  ProbeTlsObjects NONE =
      new ProbeTlsObjects() {
        @Override
        public Map<String, String> configMap(String namespace, String name) {
          return null;
        }

        @Override
        public Map<String, String> secret(String namespace, String name) {
          return null;
        }

        @Override
        public boolean secretsReadable() {
          return true;
        }
      };
}
