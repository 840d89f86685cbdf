package dev.vigil;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.File;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * The API check {@code vigil operator} runs before it starts anything: does the API server its
 * kubeconfig (or ServiceAccount) names answer, does it serve Vigil's CRDs, and does the Lease's
 * namespace exist. It answers within a deadline with one or two lines naming where the
 * configuration came from, the server, and the cause, instead of the client's retries and stack
 * traces.
 *
 * <p>It uses a client of its own with retries off and short timeouts, so an error comes back as
 * itself rather than after Fabric8's backoff; the deadline covers a server that accepts connections
 * and never answers.
 */
public final class ClusterCheck {
  /** What went wrong, in words for the user, and the exception behind it (for --debug). */
  public record Failure(String message, Throwable cause) {}

  private final Config config;
  private final String source;
  private final OperatorConfig settings;
  private final Duration deadline;

  /**
   * @param config the client configuration the operator would use
   * @param source where it came from, in words (see {@link #source})
   * @param deadline the whole check's time limit
   */
  public ClusterCheck(Config config, String source, OperatorConfig settings, Duration deadline) {
    this.config = config;
    this.source = source;
    this.settings = settings;
    this.deadline = deadline;
  }

  /** Where the client's configuration came from: the kubeconfig and context, or the Pod. */
  public static String source(Config config, Map<String, String> env) {
    File file = config.getFile();
    if (file != null) {
      String context =
          config.getCurrentContext() == null
              ? ""
              : ", context " + config.getCurrentContext().getName();
      return "kubeconfig " + file + context;
    }
    if (env.containsKey("KUBERNETES_SERVICE_HOST")) {
      return "in-cluster ServiceAccount";
    }
    return "no kubeconfig at "
        + String.join(", ", Config.getKubeconfigFilenames())
        + " and not in a cluster";
  }

  /**
   * How long the check may take: 5 s where a person waits at a terminal, 30 s in a Pod. The
   * deadline also covers the JVM loading the client and its first TLS handshake, which take seconds
   * of CPU in a container with a small CPU limit or on a busy node; a Pod that gave up after 5 s
   * there would exit, be restarted with the kubelet's growing back-off and never start. (An E2E
   * test saw four starts in a row time out at 5 s on a busy 2-core machine.)
   */
  public static Duration deadline(Config config, Map<String, String> env) {
    return config.getFile() == null && env.containsKey("KUBERNETES_SERVICE_HOST")
        ? IN_CLUSTER_DEADLINE
        : INTERACTIVE_DEADLINE;
  }

  /** The check's deadline from a kubeconfig, where a person usually waits for the answer. */
  public static final Duration INTERACTIVE_DEADLINE = Duration.ofSeconds(5);

  /** The check's deadline in a Pod (its ServiceAccount), see {@link #deadline}. */
  public static final Duration IN_CLUSTER_DEADLINE = Duration.ofSeconds(30);

  /** Empty when the operator can start; else the first problem found. */
  public Optional<Failure> run() {
    Config quick = quickConfig();
    CompletableFuture<Optional<Failure>> check = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                check.complete(checkWith(quick));
              } catch (RuntimeException e) {
                check.complete(Optional.of(unreachable(e)));
              }
            },
            "vigil-api-check");
    thread.setDaemon(true);
    thread.start();
    try {
      return check.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      thread.interrupt();
      return Optional.of(noAnswer(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.of(new Failure("vigil: interrupted while checking the API server", e));
    } catch (ExecutionException e) {
      return Optional.of(unreachable(e.getCause()));
    }
  }

  /** The client's configuration with no retries and every wait within the deadline. */
  private Config quickConfig() {
    long ms = Math.max(1, deadline.toMillis() - 500);
    return new ConfigBuilder(config)
        .withRequestRetryBackoffLimit(0)
        .withConnectionTimeout((int) ms)
        .withRequestTimeout((int) ms)
        .build();
  }

  /** The server did not answer within the deadline: where it was looked for, and what to try. */
  private Failure noAnswer(TimeoutException e) {
    return new Failure(
        "vigil: no answer from the Kubernetes API server at "
            + config.getMasterUrl()
            + " within "
            + deadline.toSeconds()
            + " s ("
            + source
            + ")\n"
            + "vigil: is the server up and is this the right context? 'kubectl cluster-info'"
            + " tries the same",
        e);
  }

  private Optional<Failure> checkWith(Config quick) {
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(quick).build()) {
      try {
        client.getKubernetesVersion();
      } catch (KubernetesClientException e) {
        return Optional.of(e.getCode() > 0 ? refused("answer /version", e) : unreachable(e));
      }
      for (Class<? extends HasMetadata> kind : List.of(HealthPolicy.class, BackendPool.class)) {
        String resource = HasMetadata.getFullResourceName(kind);
        try {
          var op = client.resources(kind);
          var options = new ListOptionsBuilder().withLimit(1L).build();
          if (settings.namespaces().isEmpty()) {
            op.inAnyNamespace().list(options);
          } else {
            op.inNamespace(settings.namespaces().iterator().next()).list(options);
          }
        } catch (KubernetesClientException e) {
          if (e.getCode() == 404) {
            return Optional.of(
                new Failure(
                    "vigil: the API server at "
                        + config.getMasterUrl()
                        + " ("
                        + source
                        + ") has no "
                        + resource
                        + ": install Vigil's CRDs with 'kubectl apply --server-side -f crds/'",
                    e));
          }
          return Optional.of(e.getCode() > 0 ? refused("list " + resource, e) : unreachable(e));
        }
      }
      if (settings.leader().election()) {
        return leaseNamespace(client);
      }
      return Optional.empty();
    }
  }

  /** A missing namespace would leave the Lease uncreatable and the operator never leading. */
  private Optional<Failure> leaseNamespace(KubernetesClient client) {
    String ns = settings.leader().leaseNamespace();
    try {
      if (client.namespaces().withName(ns).get() != null) {
        return Optional.empty();
      }
    } catch (KubernetesClientException e) {
      // no RBAC to read namespaces (a Pod's ServiceAccount): the Pod's own namespace exists
      return Optional.empty();
    }
    return Optional.of(
        new Failure(
            "vigil: namespace "
                + ns
                + " for the leader-election Lease does not exist on "
                + config.getMasterUrl()
                + "\nvigil: create it (kubectl create namespace "
                + ns
                + "), pass --lease-namespace, or --leader-election=false if no other Vigil runs",
            null));
  }

  private Failure refused(String what, KubernetesClientException e) {
    String reason =
        e.getStatus() != null && e.getStatus().getMessage() != null
            ? e.getStatus().getMessage()
            : firstLine(e.getMessage());
    String hint =
        e.getCode() == 401
            ? "the credentials of the " + source + " were rejected"
            : e.getCode() == 403
                ? "the operator's RBAC is in deploy/ (the chart, or deploy/manifests/vigil.yaml)"
                : "is this a Kubernetes API server?";
    return new Failure(
        "vigil: the API server at "
            + config.getMasterUrl()
            + " ("
            + source
            + ") would not "
            + what
            + ": HTTP "
            + e.getCode()
            + " "
            + reason
            + "\nvigil: "
            + hint,
        e);
  }

  private Failure unreachable(Throwable e) {
    return new Failure(
        "vigil: cannot reach the Kubernetes API server at "
            + config.getMasterUrl()
            + " ("
            + source
            + "): "
            + cause(e)
            + "\nvigil: check the current context ('kubectl config current-context') or set"
            + " KUBECONFIG; --debug prints the stack trace",
        e);
  }

  /**
   * The cause in a few words. The client wraps it several times and the innermost exception is not
   * always the telling one (a refused connection ends in a {@code ClosedChannelException} under a
   * {@code ConnectException}), so the whole chain is searched for the kinds that say something.
   */
  static String cause(Throwable e) {
    List<Throwable> chain = new java.util.ArrayList<>();
    for (Throwable t = e; t != null && !chain.contains(t); t = t.getCause()) {
      chain.add(t);
    }
    for (Throwable t : chain) {
      String message = t.getMessage();
      String lower = message == null ? "" : message.toLowerCase(java.util.Locale.ROOT);
      if (t instanceof java.util.concurrent.TimeoutException
          || t instanceof java.net.SocketTimeoutException
          || t instanceof java.net.http.HttpTimeoutException
          || lower.contains("timeout")
          || lower.contains("timed out")) {
        return "no answer (timed out" + (message == null ? "" : ": " + firstLine(message)) + ")";
      }
      if (t instanceof UnresolvedAddressException || t instanceof UnknownHostException) {
        return "cannot resolve the server's host name"
            + (t.getMessage() == null ? "" : " (" + firstLine(t.getMessage()) + ")");
      }
      if (t instanceof NoRouteToHostException) {
        return "no route to host";
      }
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof SSLException) {
        return "TLS: " + firstLine(t.getMessage());
      }
    }
    Throwable root = chain.get(chain.size() - 1);
    String message = root.getMessage();
    return root.getClass().getSimpleName() + (message == null ? "" : ": " + firstLine(message));
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
