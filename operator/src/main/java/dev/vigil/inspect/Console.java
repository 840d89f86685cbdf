package dev.vigil.inspect;

import dev.vigil.ops.LogFormat;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.PrintStream;
import java.util.function.Supplier;

/**
 * Where a {@code vigil} command talks to: the API server (a client per command run) and the two
 * output streams, the report on {@code out} and errors on {@code err}.
 */
public record Console(Supplier<KubernetesClient> clients, PrintStream out, PrintStream err) {

  /**
   * With the client of the current kube context (kubectl hands its plugins the environment, {@code
   * KUBECONFIG} included; in a Pod, its ServiceAccount); log lines go to standard error, which
   * keeps standard output to the report.
   */
  public static Console standard() {
    LogFormat.toStandardError();
    return new Console(() -> new KubernetesClientBuilder().build(), System.out, System.err);
  }
}
