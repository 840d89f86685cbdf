package dev.vigil.e2e;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * kube-proxy (a Node in test host {@link #KUBE_PROXY_HOST}, nftables mode) and Traefik (Kubernetes
 * Ingress provider, on 127.0.0.1), started by {@code e2e/consumers.sh} on the running control
 * plane: the two consumers whose traffic {@code TrafficE2E} measures. {@link #close()} stops both.
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
      String exports = c.script(Duration.ofSeconds(30), "env").out();
      for (String line : exports.split("\n")) {
        // export NAME='value'
        if (line.startsWith("export ")) {
          String[] kv = line.substring("export ".length()).split("=", 2);
          c.env.put(kv[0], kv[1].replace("'", ""));
        }
      }
      return c;
    } catch (RuntimeException | AssertionError e) {
      c.close();
      throw e;
    }
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

  private E2eCluster.Result script(Duration timeout, String... args) {
    String[] command = new String[args.length + 1];
    command[0] = cluster.path("e2e/consumers.sh").toString();
    System.arraycopy(args, 0, command, 1, args.length);
    return cluster.run(timeout, null, command).assertOk();
  }

  @Override
  public void close() {
    cluster.run(Duration.ofSeconds(60), null, cluster.path("e2e/consumers.sh").toString(), "stop");
  }
}
