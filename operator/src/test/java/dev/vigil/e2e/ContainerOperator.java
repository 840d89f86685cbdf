package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * The operator run from its image ({@code VIGIL_E2E_IMAGE}, built by {@code deploy/image/build.sh})
 * with podman, configured as the chart configures its Deployment: the container's args, env, user,
 * read-only root filesystem, dropped capabilities and volume mounts are read from {@code helm
 * template} of {@code deploy/helm/vigil}, and the ServiceAccount's token, CA and namespace are
 * mounted at {@code /var/run/secrets/kubernetes.io/serviceaccount} with {@code
 * KUBERNETES_SERVICE_HOST}/{@code PORT} naming the e2e API server, as the kubelet does. Host
 * network: the container reaches the API server on 127.0.0.1 and the test hosts through the bridge.
 */
public final class ContainerOperator implements RunningOperator {
  /** The in-cluster configuration's fixed path, which Fabric8 reads. */
  static final String SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

  private final E2eCluster cluster;
  private final String name;
  private final Path dir;
  private final int metricsPort;
  private long startToReadyMs;
  private String logs;

  private ContainerOperator(E2eCluster cluster, String name, Path dir, int metricsPort) {
    this.cluster = cluster;
    this.name = name;
    this.dir = dir;
    this.metricsPort = metricsPort;
  }

  /** The image under test; null when {@code VIGIL_E2E_IMAGE} is unset. */
  public static String image() {
    String image = System.getenv("VIGIL_E2E_IMAGE");
    return image == null || image.isBlank() ? null : image;
  }

  /**
   * Starts the image as the chart's Deployment runs it, for a release watching {@code namespace},
   * as {@code vigil-system/<serviceAccount>}, and waits until {@code /readyz} answers 200.
   *
   * @param leaseName null: the chart with {@code leaderElection.enabled=false}
   */
  public static ContainerOperator start(
      E2eCluster cluster, String serviceAccount, String namespace, String leaseName) {
    int[] ports = freePorts(3);
    int metricsPort = ports[0];
    int outcomePort = ports[1];
    int healthPort = ports[2];
    List<String> values =
        new ArrayList<>(
            List.of(
                // one Pod of the chart per container (replicaCount 1: no sharding, as before)
                "replicaCount=1",
                "watchNamespaces={" + namespace + "}",
                "metrics.port=" + metricsPort,
                "outcomes.port=" + outcomePort,
                // host network: two containers (a standby) must not share the health port
                "probes.port=" + healthPort));
    if (leaseName == null) {
      values.add("leaderElection.enabled=false");
    } else {
      values.add("leaderElection.leaseName=" + leaseName);
    }
    Deployment deployment = chartDeployment(cluster, values);
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    Container container = pod.getContainers().get(0);
    String name = "vigil-e2e-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
    Path dir = mountSources(cluster, serviceAccount);

    List<String> run = new ArrayList<>(List.of(podman(cluster, "run", "--detach", "--name", name)));
    // The Pod's name as its hostname, as the kubelet sets it: the leader election's identity.
    run.addAll(List.of("--network", "host", "--hostname", name));
    run.addAll(securityFlags(pod, container));
    for (VolumeMount m : container.getVolumeMounts()) {
      run.addAll(mount(pod, m, dir));
    }
    run.addAll(List.of("-v", dir.resolve("sa") + ":" + SERVICE_ACCOUNT_DIR + ":ro"));
    URI api = URI.create(System.getenv("VIGIL_E2E_APISERVER"));
    run.addAll(List.of("-e", "KUBERNETES_SERVICE_HOST=" + api.getHost()));
    run.addAll(List.of("-e", "KUBERNETES_SERVICE_PORT=" + api.getPort()));
    for (EnvVar e : container.getEnv()) {
      run.addAll(List.of("-e", e.getName() + "=" + envValue(e, name)));
    }
    run.add(image());
    run.addAll(container.getArgs());

    long started = System.nanoTime();
    cluster.run(Duration.ofSeconds(60), null, run.toArray(String[]::new)).assertOk();
    ContainerOperator operator = new ContainerOperator(cluster, name, dir, metricsPort);
    try {
      operator.startToReadyMs = operator.awaitReady(started, Duration.ofSeconds(90));
      System.out.println(
          "image " + image() + ": /readyz 200 " + operator.startToReadyMs + " ms after podman run");
      return operator;
    } catch (RuntimeException | AssertionError e) {
      operator.close();
      throw new AssertionError(
          "the image did not become ready; its log:\n" + operator.logs(), (Throwable) e);
    }
  }

  /** Milliseconds from {@code podman run} to the first 200 from {@code /readyz}. */
  public long startToReadyMs() {
    return startToReadyMs;
  }

  /** The container's output so far (all of it once closed). */
  public synchronized String logs() {
    if (logs != null) {
      return logs;
    }
    E2eCluster.Result r = cluster.run(Duration.ofSeconds(30), null, podman(cluster, "logs", name));
    return r.out() + r.err();
  }

  @Override
  public List<String> forbidden() {
    return logs().lines().filter(OperatorLog::isForbidden).toList();
  }

  /** Stops the container as the kubelet stops a Pod (SIGTERM, then SIGKILL after 10 s). */
  @Override
  public synchronized void close() {
    if (logs != null) {
      return;
    }
    cluster.run(Duration.ofSeconds(30), null, podman(cluster, "stop", "-t", "10", name));
    logs = logs();
    cluster.run(Duration.ofSeconds(30), null, podman(cluster, "rm", "-f", name));
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temp dir left behind
    }
  }

  private long awaitReady(long startedNanos, Duration timeout) {
    HttpClient http = TestTls.client();
    HttpRequest readyz =
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + metricsPort + "/readyz"))
            .timeout(Duration.ofSeconds(2))
            .build();
    long deadline = startedNanos + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (http.send(readyz, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      }
      String state =
          cluster
              .run(
                  Duration.ofSeconds(30),
                  null,
                  podman(cluster, "inspect", "-f", "{{.State.Running}}", name))
              .out()
              .trim();
      assertThat(state).as("container %s running", name).isEqualTo("true");
      sleep(100);
    }
    throw new AssertionError("no 200 from /readyz within " + timeout);
  }

  /** The Deployment of {@code helm template deploy/helm/vigil} with these {@code --set} values. */
  static Deployment chartDeployment(E2eCluster cluster, List<String> values) {
    List<String> command =
        new ArrayList<>(
            List.of(
                cluster.helm(),
                "template",
                E2eCluster.RELEASE,
                cluster.path("deploy/helm/vigil").toString(),
                "--namespace",
                E2eCluster.RELEASE_NAMESPACE,
                "--show-only",
                "templates/deployment.yaml",
                "--kube-version",
                cluster.admin().getKubernetesVersion().getGitVersion()));
    for (String v : values) {
      command.add("--set");
      command.add(v);
    }
    String yaml =
        cluster.run(Duration.ofSeconds(60), null, command.toArray(String[]::new)).assertOk().out();
    return Serialization.unmarshal(yaml, Deployment.class);
  }

  /** The pod's and container's security settings as podman flags. */
  private static List<String> securityFlags(PodSpec pod, Container container) {
    List<String> flags = new ArrayList<>();
    SecurityContext sc = container.getSecurityContext();
    var psc = pod.getSecurityContext();
    Long user = sc.getRunAsUser() != null ? sc.getRunAsUser() : psc.getRunAsUser();
    Long group = sc.getRunAsGroup() != null ? sc.getRunAsGroup() : psc.getRunAsGroup();
    assertThat(user).as("the chart sets a numeric non-root user").isNotNull().isNotZero();
    flags.addAll(List.of("--user", user + ":" + (group == null ? user : group)));
    if (Boolean.TRUE.equals(sc.getReadOnlyRootFilesystem())) {
      // Only what the chart mounts is writable: no podman tmpfs on /tmp, /run, /var/tmp.
      flags.addAll(List.of("--read-only", "--read-only-tmpfs=false"));
    }
    if (Boolean.FALSE.equals(sc.getAllowPrivilegeEscalation())) {
      flags.addAll(List.of("--security-opt", "no-new-privileges"));
    }
    if (sc.getCapabilities() != null) {
      for (String cap : sc.getCapabilities().getDrop()) {
        flags.addAll(List.of("--cap-drop", cap));
      }
    }
    return flags;
  }

  /** A volume mount of the chart: an emptyDir as a tmpfs, the TLS Secret as the test's files. */
  private static List<String> mount(PodSpec pod, VolumeMount m, Path dir) {
    Volume v =
        pod.getVolumes().stream()
            .filter(x -> x.getName().equals(m.getName()))
            .findFirst()
            .orElseThrow();
    if (v.getEmptyDir() != null) {
      String size =
          v.getEmptyDir().getSizeLimit() == null
              ? ""
              : ",size=" + v.getEmptyDir().getSizeLimit().toString().replace("Mi", "m");
      return List.of("--tmpfs", m.getMountPath() + ":rw,mode=1777" + size);
    }
    if (v.getSecret() != null) {
      return List.of("-v", dir.resolve("tls") + ":" + m.getMountPath() + ":ro");
    }
    throw new AssertionError("a chart volume this test cannot mount: " + v);
  }

  /** The ServiceAccount's token, CA and namespace, and the serving certificate, readable by all. */
  private static Path mountSources(E2eCluster cluster, String serviceAccount) {
    try {
      Path dir = Files.createTempDirectory("vigil-e2e-container");
      Path sa = Files.createDirectories(dir.resolve("sa"));
      Files.writeString(
          sa.resolve("token"), cluster.token(E2eCluster.RELEASE_NAMESPACE, serviceAccount));
      Files.copy(Path.of(System.getenv("VIGIL_E2E_CA_FILE")), sa.resolve("ca.crt"));
      Files.writeString(sa.resolve("namespace"), E2eCluster.RELEASE_NAMESPACE);
      Path tls = Files.createDirectories(dir.resolve("tls"));
      Files.copy(TestTls.certFile(), tls.resolve("tls.crt"));
      Files.copy(TestTls.keyFile(), tls.resolve("tls.key"));
      try (var files = Files.walk(dir)) {
        for (Path p : files.toList()) {
          Files.setPosixFilePermissions(
              p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
        }
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * An env value of the chart; from the downward API the Pod's namespace, or its name (the
   * container's name, which is also its hostname), and no Node (blank reads as unset: the replica's
   * zone is unknown, no Node read).
   */
  private static String envValue(EnvVar e, String podName) {
    if (e.getValueFrom() != null && e.getValueFrom().getResourceFieldRef() != null) {
      // the container's CPU limit (the probe budget's default): the test's container runs without
      // one; blank reads as unset and the budget comes from the JVM's processors
      return "";
    }
    if (e.getValueFrom() != null) {
      String field = e.getValueFrom().getFieldRef().getFieldPath();
      assertThat(field)
          .isIn("metadata.namespace", "metadata.name", "spec.nodeName", "status.podIP");
      return switch (field) {
        case "metadata.name" -> podName;
        // no Node, and no Pod IP the test knows: blank reads as unset
        case "spec.nodeName", "status.podIP" -> "";
        default -> E2eCluster.RELEASE_NAMESPACE;
      };
    }
    return e.getValue() == null ? "" : e.getValue();
  }

  /** One port, as {@link #freePorts}. */
  static int freePort() {
    return freePorts(1)[0];
  }

  /** {@code n} different free ports, as {@link #freePorts(int, RandomGenerator)}. */
  static int[] freePorts(int n) {
    return freePorts(n, ThreadLocalRandom.current());
  }

  /**
   * {@code n} different ports, each free now, outside the kernel's ephemeral range (below it, or
   * above it when it starts low): a port the OS picks from that range may be handed to an outgoing
   * connection before the operator binds it (ShardingE2E once saw a replica fail to start with
   * "Address already in use" on its outcome port). Each port stays bound until all are picked, so
   * no two are the same (one CI run drew the same port for metrics and probes, and the chart
   * refused it).
   */
  static int[] freePorts(int n, RandomGenerator random) {
    int[] range = ephemeralRange();
    // below the range if there is room, else above it
    int from = range[0] > 3_000 ? Math.max(1025, range[0] - 12_000) : range[1] + 1;
    int to = range[0] > 3_000 ? range[0] : 65_536;
    List<ServerSocket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        held.add(bindFree(from, to, random));
      }
      return held.stream().mapToInt(ServerSocket::getLocalPort).toArray();
    } finally {
      held.forEach(ContainerOperator::closeQuietly);
    }
  }

  private static ServerSocket bindFree(int from, int to, RandomGenerator random) {
    for (int attempt = 0; from < to && attempt < 200; attempt++) {
      ServerSocket s = null;
      try {
        s = new ServerSocket();
        s.bind(new java.net.InetSocketAddress(random.nextInt(from, to)));
        return s;
      } catch (IOException taken) {
        closeQuietly(s);
      }
    }
    try {
      return new ServerSocket(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void closeQuietly(ServerSocket s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException ignored) {
        // the port is free again either way
      }
    }
  }

  /** The kernel's ephemeral port range ({32768, 60999} when it cannot be read). */
  static int[] ephemeralRange() {
    try {
      String[] range =
          Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      return new int[] {Integer.parseInt(range[0]), Integer.parseInt(range[1])};
    } catch (IOException | RuntimeException e) {
      return new int[] {32_768, 60_999};
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@code podman args...} as deploy/image/build.sh runs it on this machine. */
  static String[] podman(E2eCluster cluster, String... args) {
    List<String> c =
        new ArrayList<>(
            List.of(
                "env",
                "CONTAINERS_CONF=" + cluster.path("deploy/image/containers.conf"),
                "podman",
                "--runtime",
                "runc",
                "--cgroup-manager",
                "cgroupfs"));
    c.addAll(List.of(args));
    return c.toArray(String[]::new);
  }
}
