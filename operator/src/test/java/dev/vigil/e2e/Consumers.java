package dev.vigil.e2e;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * kube-proxy (a Node in test host {@link #KUBE_PROXY_HOST}, nftables mode) and Traefik (Kubernetes
 * Ingress provider, on 127.0.0.1), started by {@code e2e/consumers.sh} on the running control
 * plane: the two consumers whose traffic {@code TrafficE2E} measures; or Traefik alone sending its
 * access log to Vigil over OTLP ({@link #traefikReportingTo}, {@code PassiveTraefikE2E}). {@link
 * #close()} stops both.
 */
final class Consumers implements AutoCloseable {
  /** The test host where kube-proxy runs and where the ClusterIP clients run. */
  static final int KUBE_PROXY_HOST = 1;

  private final E2eCluster cluster;
  private final Map<String, String> env = new HashMap<>();

  private Consumers(E2eCluster cluster) {
    this.cluster = cluster;
  }

  /**
   * Starts kube-proxy and, if asked, Traefik (each stopped first); fails with the script's output
   * when one cannot start.
   */
  static Consumers start(E2eCluster cluster, boolean traefik) {
    Consumers c = new Consumers(cluster);
    try {
      c.script(Duration.ofSeconds(180), "kube-proxy", "start", Integer.toString(KUBE_PROXY_HOST));
      if (traefik) {
        c.script(Duration.ofSeconds(180), "traefik", "start");
      }
      c.readEnv();
      return c;
    } catch (RuntimeException | AssertionError e) {
      c.close();
      throw e;
    }
  }

  /**
   * Traefik alone (no kube-proxy), exporting its access log over OTLP ({@code protocol} {@code
   * grpc} or {@code http}) to the outcome port {@code 127.0.0.1:outcomePort} whose certificate
   * {@code caFile} signed, with a token of its ServiceAccount {@code kube-system/traefik} for the
   * audience {@code vigil.dev}: bind that ServiceAccount in each namespace whose pools it reports
   * for ({@link #bindTraefikAsReporter}).
   */
  static Consumers traefikReportingTo(
      E2eCluster cluster, int outcomePort, Path caFile, String protocol) {
    Consumers c = new Consumers(cluster);
    try {
      c.script(
          Duration.ofSeconds(180),
          Map.of(
              "VIGIL_E2E_TRAEFIK_OTLP_ENDPOINT",
              "127.0.0.1:" + outcomePort,
              "VIGIL_E2E_TRAEFIK_OTLP_CA",
              caFile.toString(),
              "VIGIL_E2E_TRAEFIK_OTLP_PROTOCOL",
              protocol),
          "traefik",
          "start");
      c.readEnv();
      return c;
    } catch (RuntimeException | AssertionError e) {
      c.close();
      throw e;
    }
  }

  /**
   * A RoleBinding in {@code namespace} of the chart's ClusterRole {@code vigil-outcome-reporter}
   * (create {@code backendpools/outcomes}) to Traefik's ServiceAccount {@code kube-system/traefik}.
   */
  static void bindTraefikAsReporter(E2eCluster cluster, String namespace) {
    cluster
        .kubectlIn(
            """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: RoleBinding
            metadata: {name: traefik-reports-outcomes, namespace: %s}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vigil-outcome-reporter}
            subjects:
            - {kind: ServiceAccount, name: traefik, namespace: kube-system}
            """
                .formatted(namespace),
            "apply",
            "-f",
            "-")
        .assertOk();
  }

  /**
   * An Ingress {@code web} in {@code namespace} of class {@code traefik}: host {@code host}, every
   * path, to port {@code servicePort} of the Service {@code web}.
   */
  static void routeToWeb(E2eCluster cluster, String namespace, String host, int servicePort) {
    cluster
        .kubectlIn(
            """
            apiVersion: networking.k8s.io/v1
            kind: Ingress
            metadata: {name: web, namespace: %s}
            spec:
              ingressClassName: traefik
              rules:
              - host: %s
                http:
                  paths:
                  - path: /
                    pathType: Prefix
                    backend: {service: {name: web, port: {number: %d}}}
            """
                .formatted(namespace, host, servicePort),
            "apply",
            "-f",
            "-")
        .assertOk();
  }

  /** Traefik's entry point, {@code http://127.0.0.1:<port>}. */
  String traefikUrl() {
    return require("VIGIL_E2E_TRAEFIK_URL");
  }

  private String require(String name) {
    String v = env.get(name);
    if (v == null) {
      throw new AssertionError("e2e/consumers.sh env printed no " + name + ": " + env);
    }
    return v;
  }

  /** What {@code e2e/consumers.sh env} prints ({@code export NAME='value'} lines). */
  private void readEnv() {
    String exports = script(Duration.ofSeconds(30), "env").out();
    for (String line : exports.split("\n")) {
      if (line.startsWith("export ")) {
        String[] kv = line.substring("export ".length()).split("=", 2);
        env.put(kv[0], kv[1].replace("'", ""));
      }
    }
  }

  private E2eCluster.Result script(Duration timeout, String... args) {
    return script(timeout, Map.of(), args);
  }

  private E2eCluster.Result script(Duration timeout, Map<String, String> extraEnv, String... args) {
    String[] command = new String[args.length + 1];
    command[0] = cluster.path("e2e/consumers.sh").toString();
    System.arraycopy(args, 0, command, 1, args.length);
    return cluster.run(timeout, null, extraEnv, command).assertOk();
  }

  @Override
  public void close() {
    cluster.run(Duration.ofSeconds(60), null, cluster.path("e2e/consumers.sh").toString(), "stop");
  }
}
