package dev.vigil.testing;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.health.ActiveState;
import dev.vigil.health.BackendHold;
import dev.vigil.health.BackendView;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;

/** Objects tests create: policies, pools and Pods whose IPs are real loopback backends. */
public final class Fixtures {
  private Fixtures() {}

  public static <T extends HasMetadata> T yaml(String text, Class<T> type) {
    return Serialization.unmarshal(text, type);
  }

  /** A policy for fast tests: interval, timeout, rise 2, fall 3, no jitter. */
  public static HealthPolicy policy(String ns, String name, String interval, String timeout) {
    return yaml(
        """
        apiVersion: vigil.dev/v1alpha1
        kind: HealthPolicy
        metadata: {name: %s, namespace: %s}
        spec:
          active:
            protocol: HTTP
            interval: %s
            timeout: %s
            jitterPercent: 0
            rise: 2
            fall: 3
            http: {path: /healthz}
          passive:
            consecutiveErrors: 5
            baseEjectionTime: 2s
            maxEjectionTime: 10s
            maxEjectionPercent: 25
          panicThresholdPercent: 50
        """
            .formatted(name, ns, interval, timeout),
        HealthPolicy.class);
  }

  public static BackendPool pool(String ns, String name, String policy, String app, int port) {
    return yaml(
        """
        apiVersion: vigil.dev/v1alpha1
        kind: BackendPool
        metadata: {name: %s, namespace: %s}
        spec:
          policyRef: {name: %s}
          selector: {matchLabels: {app: %s}}
          ports:
          - {name: http, port: 80, targetPort: %d, protocol: TCP}
        """
            .formatted(name, ns, policy, app, port),
        BackendPool.class);
  }

  /**
   * A headless Service {@code name} (port 80 to {@code targetPort}): a pool's Service made in
   * advance, as a real API server's small Service IP range holds fewer ClusterIPs than a large
   * run's pools.
   */
  public static Service headlessService(String ns, String name, int targetPort) {
    return new ServiceBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .endMetadata()
        .withNewSpec()
        .withClusterIP("None")
        .addNewPort()
        .withName("http")
        .withPort(80)
        .withNewTargetPort(targetPort)
        .withProtocol("TCP")
        .endPort()
        .endSpec()
        .build();
  }

  /** A running, Ready Pod at {@code ip}. */
  public static Pod pod(String ns, String name, String app, String ip) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .withUid("uid-" + name)
        .addToLabels("app", app)
        .endMetadata()
        .withNewSpec()
        .withNodeName("node-1")
        .addNewContainer()
        .withName("app")
        .withImage("example/app")
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .withPodIP(ip)
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  /** The view of a backend that is Up after two passes: available, never ejected nor damped. */
  public static BackendView upBackend(String id) {
    return new BackendView(
        id, ActiveState.UP, 2, 0, 0, 0, 0, false, 0, false, true, false, 0, 0, 0, BackendHold.NONE);
  }

  /**
   * A {@code kubernetes.io/tls} Secret {@code name} labelled for probe TLS ({@code
   * vigil.dev/probe-tls=true}, the label the operator's informers select).
   */
  public static io.fabric8.kubernetes.api.model.Secret probeTlsSecret(
      String ns, String name, String certPem, String keyPem) {
    return new io.fabric8.kubernetes.api.model.SecretBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .withLabels(java.util.Map.of(dev.vigil.reconcile.ProbeTlsObjects.LABEL, "true"))
        .endMetadata()
        .withType("kubernetes.io/tls")
        .withData(java.util.Map.of("tls.crt", base64(certPem), "tls.key", base64(keyPem)))
        .build();
  }

  private static String base64(String s) {
    return java.util.Base64.getEncoder()
        .encodeToString(s.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }
}
