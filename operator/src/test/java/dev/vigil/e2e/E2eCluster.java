package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The real control plane that {@code e2e/control-plane.sh start} runs, as the tests see it: an
 * admin client, {@code kubectl} and {@code helm} from the harness, fresh namespaces, and clients
 * that authenticate as a ServiceAccount with a token from the TokenRequest API.
 *
 * <p>Every E2E test calls {@link #get()} first; without {@code VIGIL_E2E_KUBECONFIG} it skips
 * itself, so a plain {@code mvn verify} passes without the harness. {@code .ci/run} sets it.
 */
public final class E2eCluster {
  /** The chart's release: name and namespace, as the README's install command uses them. */
  public static final String RELEASE = "vigil";

  public static final String RELEASE_NAMESPACE = "vigil-system";

  private static E2eCluster instance;

  private final Map<String, String> env;
  private final Path repo;
  private final KubernetesClient admin;
  private boolean crdsApplied;
  private boolean chartInstalled;

  private E2eCluster(Map<String, String> env) throws IOException {
    this.env = env;
    this.repo = findRepo();
    this.admin =
        new KubernetesClientBuilder()
            .withConfig(
                Config.fromKubeconfig(Files.readString(Path.of(env.get("VIGIL_E2E_KUBECONFIG")))))
            .build();
  }

  /** {@link #get()}, with the chart installed ({@link #installChart()}). */
  public static E2eCluster withChart() {
    E2eCluster cluster = get();
    cluster.installChart();
    return cluster;
  }

  /** The cluster, or a skipped test when the harness is not running. */
  public static synchronized E2eCluster get() {
    String kubeconfig = System.getenv("VIGIL_E2E_KUBECONFIG");
    if (Boolean.getBoolean("vigil.e2e.required")) {
      assertThat(kubeconfig)
          .as("-Pe2e needs VIGIL_E2E_KUBECONFIG: eval \"$(e2e/control-plane.sh env)\"")
          .isNotBlank();
    }
    assumeTrue(
        kubeconfig != null && !kubeconfig.isBlank(),
        "VIGIL_E2E_KUBECONFIG is unset: no real control plane (see e2e/README.md)");
    if (instance == null) {
      try {
        instance = new E2eCluster(System.getenv());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return instance;
  }

  /**
   * A precondition of the harness (the image built, a tool installed): with {@code -Pe2e} a failure
   * naming what to do, without it a skipped test.
   */
  public static void require(boolean met, String message) {
    if (Boolean.getBoolean("vigil.e2e.required")) {
      assertThat(met).as(message).isTrue();
    }
    assumeTrue(met, message);
  }

  public KubernetesClient admin() {
    return admin;
  }

  public Path repo() {
    return repo;
  }

  public Path path(String relative) {
    return repo.resolve(relative);
  }

  /** A new namespace for one test: without a namespace controller a deleted one never goes. */
  public String freshNamespace(String prefix) {
    String name = prefix + "-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    return name;
  }

  /**
   * {@code kubectl apply --server-side -f crds/} once per JVM, and waits until both are
   * Established.
   */
  public synchronized void applyCrds() {
    if (crdsApplied) {
      return;
    }
    // as the README installs them (server-side): a later `kubectl apply --server-side -f crds/`
    // by InstallStoryE2E then meets its own field manager, not client-side apply's
    run(
            Duration.ofSeconds(60),
            null,
            kubectl(),
            "apply",
            "--server-side",
            "-f",
            path("crds").toString())
        .assertOk();
    run(
            Duration.ofSeconds(60),
            null,
            kubectl(),
            "wait",
            "--for",
            "condition=Established",
            "crd/healthpolicies.vigil.dev",
            "crd/backendpools.vigil.dev",
            "--timeout=50s")
        .assertOk();
    crdsApplied = true;
  }

  /**
   * {@code helm install vigil deploy/helm/vigil -n vigil-system --create-namespace} once per JVM
   * (its Deployment's Pods never start: there is no kubelet).
   */
  public synchronized Result installChart() {
    applyCrds();
    if (chartInstalled) {
      return null;
    }
    Result installed =
        run(Duration.ofSeconds(30), null, helm(), "status", RELEASE, "-n", RELEASE_NAMESPACE);
    if (installed.exit() == 0) {
      // A developer's second run on the same control plane; CI's cluster is always fresh.
      chartInstalled = true;
      return installed;
    }
    Result r =
        run(
            Duration.ofSeconds(120),
            null,
            helm(),
            "install",
            RELEASE,
            path("deploy/helm/vigil").toString(),
            "--namespace",
            RELEASE_NAMESPACE,
            "--create-namespace",
            "--wait=false",
            "--timeout",
            "100s");
    r.assertOk();
    chartInstalled = true;
    return r;
  }

  /** The holder of Lease {@code name} in the release namespace, or null. */
  public String leaseHolder(String name) {
    var lease =
        admin
            .resources(io.fabric8.kubernetes.api.model.coordination.v1.Lease.class)
            .inNamespace(RELEASE_NAMESPACE)
            .withName(name)
            .get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  /**
   * {@code helm uninstall vigil -n vigil-system} if installed (the namespace stays: without a
   * namespace controller a deleted one never goes); {@link #installChart()} installs it again.
   */
  public synchronized void uninstallChart() {
    Result installed =
        run(Duration.ofSeconds(30), null, helm(), "status", RELEASE, "-n", RELEASE_NAMESPACE);
    if (installed.exit() == 0) {
      run(
              Duration.ofSeconds(120),
              null,
              helm(),
              "uninstall",
              RELEASE,
              "-n",
              RELEASE_NAMESPACE,
              "--wait=false")
          .assertOk();
    }
    chartInstalled = false;
  }

  /**
   * A Pod that "runs" at {@code ip}: created, then its status (phase Running, Ready, podIP) set
   * through the status subresource, as a kubelet would. No kubelet runs here.
   */
  public void createRunningPod(String namespace, String name, String app, String ip) {
    createRunningPod(namespace, name, app, ip, null);
  }

  /** As {@link #createRunningPod(String, String, String, String)}, on Node {@code nodeName}. */
  public void createRunningPod(
      String namespace, String name, String app, String ip, String nodeName) {
    Pod want = Fixtures.pod(namespace, name, app, ip);
    if (nodeName != null) {
      want.getSpec().setNodeName(nodeName);
    }
    want.getStatus().setPodIPs(List.of(new PodIP(ip)));
    createWithStatus(want);
  }

  /**
   * Creates {@code want}, then sets its status through the status subresource (the create drops
   * it), as a kubelet would.
   */
  public void createWithStatus(Pod want) {
    createWithStatus(admin, want);
  }

  /** {@link #createWithStatus(Pod)} through {@code client}. */
  public static void createWithStatus(KubernetesClient client, Pod want) {
    want.getMetadata().setUid(null);
    PodStatus status = want.getStatus();
    client.resource(want).create();
    client
        .pods()
        .inNamespace(want.getMetadata().getNamespace())
        .withName(want.getMetadata().getName())
        .editStatus(
            p -> {
              p.setStatus(status);
              return p;
            });
  }

  /** Creates the ServiceAccount {@code namespace/name}. */
  public void serviceAccount(String namespace, String name) {
    admin
        .serviceAccounts()
        .inNamespace(namespace)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  /** Binds the ServiceAccount {@code saNamespace/sa} cluster-wide to {@code clusterRole}. */
  public void bindClusterRole(String binding, String clusterRole, String saNamespace, String sa) {
    admin
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(binding)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", clusterRole)
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(sa)
                .withNamespace(saNamespace)
                .endSubject()
                .build())
        .create();
  }

  /**
   * Binds the ServiceAccount {@code namespace/sa}, in {@code namespace} only, to the {@code
   * roleKind} ({@code Role} or {@code ClusterRole}) {@code role}.
   */
  public void bindRole(String namespace, String binding, String roleKind, String role, String sa) {
    admin
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(binding)
                .withNamespace(namespace)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", roleKind, role)
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(sa)
                .withNamespace(namespace)
                .endSubject()
                .build())
        .create();
  }

  /** A token for {@code namespace/serviceAccount} from the TokenRequest API. */
  public String token(String namespace, String serviceAccount) {
    return token(namespace, serviceAccount, null);
  }

  /**
   * A ServiceAccount token for an audience (null: the API server's), valid an hour: what a
   * projected token volume with that audience holds.
   */
  public String token(String namespace, String serviceAccount, String audience) {
    List<String> args =
        new ArrayList<>(
            List.of(
                kubectl(), "create", "token", serviceAccount, "-n", namespace, "--duration", "1h"));
    if (audience != null) {
      args.add("--audience");
      args.add(audience);
    }
    Result r = run(Duration.ofSeconds(30), null, args.toArray(String[]::new));
    r.assertOk();
    return r.out().trim();
  }

  /**
   * A client that authenticates only with a ServiceAccount token: no client certificate, no
   * kubeconfig (the environment's KUBECONFIG is the admin's and must not leak in).
   */
  public KubernetesClient clientAs(String namespace, String serviceAccount) {
    Config config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl(env.get("VIGIL_E2E_APISERVER"))
            .withCaCertFile(env.get("VIGIL_E2E_CA_FILE"))
            .withOauthToken(token(namespace, serviceAccount))
            .withNamespace(namespace)
            .withRequestTimeout(30_000)
            .build();
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  public Path auditLog() {
    return Path.of(env.get("VIGIL_E2E_AUDIT_LOG"));
  }

  public String kubectl() {
    return binary("kubectl");
  }

  public String helm() {
    return binary("helm");
  }

  private String binary(String name) {
    String bin = env.get("VIGIL_E2E_BIN");
    return bin == null ? name : Path.of(bin, name).toString();
  }

  /** {@code kubectl args...} with the admin kubeconfig. */
  public Result kubectl(String... args) {
    return kubectlIn(null, args);
  }

  /** {@code kubectl args...} with {@code stdin} on its standard input. */
  public Result kubectlIn(String stdin, String... args) {
    List<String> command = new ArrayList<>();
    command.add(kubectl());
    command.addAll(List.of(args));
    return run(Duration.ofSeconds(60), stdin, command.toArray(String[]::new));
  }

  /** The outcome of a command: exit code, standard output and standard error. */
  public record Result(String command, int exit, String out, String err) {
    public Result assertOk() {
      assertThat(exit).as("%s%nstdout: %s%nstderr: %s", command, out, err).isZero();
      return this;
    }
  }

  /**
   * {@code kubectl args...} with the repository's {@code bin/} first on PATH, where kubectl's
   * plugin discovery finds {@code kubectl-vigil}.
   */
  public Result kubectlWithPlugin(String... args) {
    List<String> command = new ArrayList<>();
    command.add(kubectl());
    command.addAll(List.of(args));
    String path = repo.resolve("bin") + java.io.File.pathSeparator + System.getenv("PATH");
    return run(Duration.ofSeconds(180), null, Map.of("PATH", path), command.toArray(String[]::new));
  }

  /** Runs a command from the repository root with the harness's environment, bounded in time. */
  public Result run(Duration timeout, String stdin, String... command) {
    return run(timeout, stdin, Map.of(), command);
  }

  /**
   * As {@link #run(Duration, String, String...)}, with {@code extraEnv} added to the environment.
   */
  public Result run(
      Duration timeout, String stdin, Map<String, String> extraEnv, String... command) {
    try {
      Path out = Files.createTempFile("vigil-e2e", ".out");
      Path err = Files.createTempFile("vigil-e2e", ".err");
      try {
        ProcessBuilder pb =
            new ProcessBuilder(command)
                .directory(repo.toFile())
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        pb.environment().put("KUBECONFIG", env.get("VIGIL_E2E_KUBECONFIG"));
        pb.environment().putAll(extraEnv);
        Process p = pb.start();
        if (stdin != null) {
          p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          p.destroyForcibly();
          throw new AssertionError(String.join(" ", command) + ": no exit within " + timeout);
        }
        return new Result(
            String.join(" ", command), p.exitValue(), Files.readString(out), Files.readString(err));
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted: " + String.join(" ", command), e);
    }
  }

  static Path findRepo() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null) {
      if (Files.isDirectory(dir.resolve("crds")) && Files.isDirectory(dir.resolve("e2e"))) {
        return dir;
      }
      dir = dir.getParent();
    }
    throw new IllegalStateException("no repository root (crds/ and e2e/) above the working dir");
  }
}
