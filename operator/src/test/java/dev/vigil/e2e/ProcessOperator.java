package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The operator as a separate OS process ({@code java -cp <the operator's classes and dependencies>
 * dev.vigil.cli.Main}), configured as one Pod of the chart's Deployment: its args and env come from
 * {@code helm template deploy/helm/vigil} (as {@link ContainerOperator} reads them), {@code
 * POD_NAME} is the replica's name, the ServiceAccount's token and the API server's CA are files the
 * Fabric8 client reads as it reads the kubelet's mount ({@code KUBERNETES_SERVICE_HOST}/{@code
 * PORT}, {@code kubernetes.auth.serviceAccount.token}, {@code kubernetes.certs.ca.file}; no
 * kubeconfig), the chart's memory limit is the JVM's {@code MaxRAM}, and the outcome port's
 * certificate is the test CA's. Metrics, outcome and health ports are free ports of its own. Its
 * stdout and stderr go to a log file that {@link #forbidden()} scans.
 *
 * <p>Bounded: a watchdog process kills it with SIGKILL after {@link #MAX_LIFETIME} even if the test
 * JVM dies; {@link #close()} stops it as the kubelet stops a Pod, {@link #kill()} as {@code kill
 * -9} does.
 */
public final class ProcessOperator implements RunningOperator {
  static final Duration MAX_LIFETIME = Duration.ofMinutes(10);
  private static final Duration GRACE = Duration.ofSeconds(30);

  /**
   * Restarts after an exit of its own, before or after Ready, as the kubelet restarts a container
   * that exits (restartPolicy Always; a replica that lost its shard Lease exits to start clean).
   */
  private static final int MAX_RESTARTS = 3;

  private final String name;
  private final ProcessBuilder command;
  private volatile Process process;
  private volatile Process watchdog;
  private volatile int restarts;

  /** Set by {@link #kill()} and {@link #terminate()}: an exit the test caused is not restarted. */
  private volatile boolean stopping;

  private final Path dir;
  private final Path log;
  private final int metricsPort;
  private final int healthPort;
  private final int outcomePort;
  private long startToReadyMs = -1;

  private ProcessOperator(
      String name,
      ProcessBuilder command,
      Path dir,
      Path log,
      int metricsPort,
      int healthPort,
      int outcomePort) {
    this.name = name;
    this.command = command;
    this.dir = dir;
    this.log = log;
    this.metricsPort = metricsPort;
    this.healthPort = healthPort;
    this.outcomePort = outcomePort;
  }

  /**
   * Starts replica {@code podName} of the chart rendered with {@code values} (besides the ports,
   * which this class picks); does not wait for it to be ready.
   *
   * @param token a token of the chart's ServiceAccount ({@link #serviceAccountToken}), as the
   *     kubelet mounts it
   */
  public static ProcessOperator start(
      E2eCluster cluster, String podName, List<String> values, String token) {
    return start(cluster, podName, values, token, Map.of());
  }

  /**
   * A replica {@code name + "-" + ns} of the chart unsharded with two replicas (leader election on
   * Lease {@code "vigil-" + ns}), watching {@code ns}.
   */
  static ProcessOperator startUnsharded(E2eCluster cluster, String name, String ns, String token) {
    return start(
        cluster,
        name + "-" + ns,
        List.of(
            "replicaCount=2",
            "sharding.enabled=false",
            "watchNamespaces={" + ns + "}",
            "leaderElection.leaseName=vigil-" + ns),
        token);
  }

  /**
   * As {@link #start(E2eCluster, String, List, String)}, with {@code env} set over the chart's
   * (flags the chart has no value for: {@code VIGIL_ZONE}, {@code VIGIL_PROBE_SOURCE_ADDRESS}).
   */
  public static ProcessOperator start(
      E2eCluster cluster,
      String podName,
      List<String> values,
      String token,
      Map<String, String> env) {
    int[] ports = ContainerOperator.freePorts(3);
    int metricsPort = ports[0];
    int outcomePort = ports[1];
    int healthPort = ports[2];
    List<String> all = new ArrayList<>(values);
    all.addAll(
        List.of(
            "metrics.port=" + metricsPort,
            "outcomes.port=" + outcomePort,
            "probes.port=" + healthPort));
    var pod = ContainerOperator.chartDeployment(cluster, all).getSpec().getTemplate().getSpec();
    try {
      return launch(
          podName,
          pod,
          token,
          Files.readAllBytes(TestTls.certFile()),
          Files.readAllBytes(TestTls.keyFile()),
          ports,
          env);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts replica {@code podName} of a Deployment as the API server holds it (what {@code kubectl
   * apply} made of the plain manifests), its outcome certificate the content of the Secret the
   * Deployment mounts; the three ports become free ports of its own (a Pod has its own network
   * namespace, this process shares the machine's).
   */
  public static ProcessOperator startFromDeployment(
      io.fabric8.kubernetes.api.model.apps.Deployment deployment,
      String podName,
      String token,
      byte[] tlsCert,
      byte[] tlsKey) {
    return launch(
        podName,
        deployment.getSpec().getTemplate().getSpec(),
        token,
        tlsCert,
        tlsKey,
        ContainerOperator.freePorts(3),
        Map.of());
  }

  private static ProcessOperator launch(
      String podName,
      io.fabric8.kubernetes.api.model.PodSpec pod,
      String token,
      byte[] tlsCert,
      byte[] tlsKey,
      int[] ports,
      Map<String, String> extraEnv) {
    int outcomePort = ports[1];
    int healthPort = ports[2];
    Container container = pod.getContainers().get(0);
    try {
      Path dir = Files.createTempDirectory("vigil-e2e-process-" + podName);
      assertThat(pod.getServiceAccountName()).isEqualTo(E2eCluster.RELEASE);
      Path tokenFile = dir.resolve("token");
      Files.writeString(tokenFile, token);
      Path tls = Files.createDirectories(dir.resolve("tls"));
      Files.write(tls.resolve("tls.crt"), tlsCert);
      Files.write(tls.resolve("tls.key"), tlsKey);
      Path log = dir.resolve("operator.log");

      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      Quantity memory = container.getResources().getLimits().get("memory");
      if (memory != null) {
        // what a container's cgroup limit tells the JVM; javaOptions' percentages apply to it
        command.add("-XX:MaxRAM=" + Quantity.getAmountInBytes(memory).longValue());
      }
      command.addAll(List.of("-cp", operatorClasspath(), "dev.vigil.cli.Main"));
      command.addAll(container.getArgs());
      ProcessBuilder pb =
          new ProcessBuilder(command).redirectErrorStream(true).directory(dir.toFile());
      Map<String, String> env = pb.environment();
      // nothing of the test's own configuration leaks in: no admin kubeconfig
      env.remove("KUBECONFIG");
      env.keySet().removeIf(k -> k.startsWith("VIGIL_"));
      for (EnvVar e : container.getEnv()) {
        env.put(e.getName(), envValue(e, podName, tls));
      }
      env.put("VIGIL_METRICS_PORT", Integer.toString(ports[0]));
      env.put("VIGIL_OUTCOME_PORT", Integer.toString(outcomePort));
      env.put("VIGIL_HEALTH_PORT", Integer.toString(healthPort));
      URI api = URI.create(System.getenv("VIGIL_E2E_APISERVER"));
      env.put("KUBERNETES_SERVICE_HOST", api.getHost());
      env.put("KUBERNETES_SERVICE_PORT", Integer.toString(api.getPort()));
      env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
      env.put("KUBERNETES_AUTH_SERVICEACCOUNT_TOKEN", tokenFile.toString());
      env.put("KUBERNETES_CERTS_CA_FILE", System.getenv("VIGIL_E2E_CA_FILE"));
      env.put("HOSTNAME", podName);
      env.putAll(extraEnv);
      ProcessOperator operator =
          new ProcessOperator(podName, pb, dir, log, ports[0], healthPort, outcomePort);
      operator.launch();
      return operator;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts the process (its output appended to the log) and a watchdog that bounds its life; an
   * exit the test did not cause starts it again.
   */
  private synchronized void launch() throws IOException {
    Process started =
        command.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    process = started;
    watchdog =
        new ProcessBuilder(
                "sh",
                "-c",
                "sleep " + MAX_LIFETIME.toSeconds() + "; kill -9 " + started.pid() + " 2>/dev/null")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    started.onExit().thenRun(() -> restartAfter(started));
  }

  private synchronized void restartAfter(Process exited) {
    if (stopping || exited != process || restarts == MAX_RESTARTS) {
      return;
    }
    restarts++;
    watchdog.destroyForcibly();
    try {
      launch();
    } catch (IOException e) {
      // stays down: awaitReady and the test's own checks report it
    }
  }

  /** A token of the chart's ServiceAccount ({@code vigil-system/vigil}), valid an hour. */
  public static String serviceAccountToken(E2eCluster cluster) {
    return cluster.token(E2eCluster.RELEASE_NAMESPACE, E2eCluster.RELEASE);
  }

  /** Waits until {@code /readyz} on the health port answers 200; returns ms since the start. */
  public long awaitReady(Duration timeout) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest readyz =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/readyz"))
            .timeout(Duration.ofSeconds(2))
            .build();
    long started = process.info().startInstant().map(i -> i.toEpochMilli()).orElse(0L);
    long startedNanos = System.nanoTime();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      Process p = process;
      if (!p.isAlive() && restarts == MAX_RESTARTS) {
        throw new AssertionError(
            name
                + " exited with "
                + p.exitValue()
                + " before it was ready, after "
                + restarts
                + " restarts; its log:\n"
                + log());
      }
      try {
        if (http.send(readyz, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          startToReadyMs =
              started == 0
                  ? Duration.ofNanos(System.nanoTime() - startedNanos).toMillis()
                  : System.currentTimeMillis() - started;
          return startToReadyMs;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      }
      ContainerOperator.sleep(200);
    }
    throw new AssertionError(name + ": no 200 from /readyz within " + timeout + "; log:\n" + log());
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  /** The port of /metrics (TLS unless the chart's {@code metrics.secure=false}). */
  public int metricsPort() {
    return metricsPort;
  }

  /** The outcome intake's port (TLS, on all addresses). */
  public int outcomePort() {
    return outcomePort;
  }

  public long startToReadyMs() {
    return startToReadyMs;
  }

  /** How often it exited on its own and was started again. */
  public int restarts() {
    return restarts;
  }

  /** {@code kill -9}: SIGKILL, then waits until the process is gone; returns its exit value. */
  public int kill() {
    stopping = true;
    process.destroyForcibly();
    return awaitExit(Duration.ofSeconds(10));
  }

  /** Whether the OS still has the process. */
  public boolean alive() {
    return ProcessHandle.of(process.pid()).map(ProcessHandle::isAlive).orElse(false);
  }

  /**
   * Stops it as the kubelet stops a Pod: SIGTERM, SIGKILL after 30 s; returns the exit value (143
   * after a clean shutdown on SIGTERM).
   */
  public int terminate() {
    stopping = true;
    if (!process.isAlive()) {
      return process.exitValue();
    }
    process.destroy();
    try {
      if (process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        return process.exitValue();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return kill();
  }

  private int awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError(name + " (pid " + process.pid() + ") still runs after SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
    return process.exitValue();
  }

  /** Its output so far. */
  public String log() {
    try {
      return Files.exists(log) ? Files.readString(log) : "";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  /**
   * The WARN and ERROR lines (and lines that are no log record: stack traces, the start check's
   * messages) that report a refused request; the timestamp is left out of the match.
   */
  @Override
  public List<String> forbidden() {
    return log()
        .lines()
        .map(l -> TIMESTAMP.matcher(l).replaceFirst(""))
        .filter(l -> !QUIET.matcher(l).lookingAt())
        .filter(OperatorLog::isForbidden)
        .toList();
  }

  private static final java.util.regex.Pattern TIMESTAMP =
      java.util.regex.Pattern.compile("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ");
  private static final java.util.regex.Pattern QUIET =
      java.util.regex.Pattern.compile("(TRACE|DEBUG|INFO) ");

  /** Stops it (SIGTERM, then SIGKILL) and its watchdog; the log file stays for {@link #log()}. */
  @Override
  public void close() {
    try {
      terminate();
    } finally {
      watchdog.destroyForcibly();
    }
  }

  /**
   * Copies its log to {@code logs/<name>.log} (the build's {@code target/e2e-logs}: kept after the
   * test for a look at a failure), then removes its temp dir (token, certificate, log).
   */
  public void keepLogAndDeleteFiles(Path logs) {
    try {
      Files.createDirectories(logs);
      if (Files.exists(log)) {
        Files.copy(
            log, logs.resolve(name + ".log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      // the log is lost with the temp dir
    }
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temp dir left behind
    }
  }

  /**
   * After a test: stops every replica still running, keeps its log under {@code
   * target/e2e-logs/<dir>} and deletes its files ({@link #keepLogAndDeleteFiles}), then asserts
   * that the chart's RBAC refused none of their requests.
   */
  static void closeAll(List<ProcessOperator> started, String dir) {
    try {
      for (ProcessOperator o : started) {
        o.close();
      }
    } finally {
      keepLogsAndAssertNoneForbidden(started, dir);
    }
  }

  private static void keepLogsAndAssertNoneForbidden(List<ProcessOperator> started, String dir) {
    List<String> forbidden = new ArrayList<>();
    for (ProcessOperator o : started) {
      o.forbidden().forEach(l -> forbidden.add(o.name() + ": " + l));
      o.keepLogAndDeleteFiles(Path.of("target", "e2e-logs", dir));
    }
    assertThat(forbidden).as("requests the chart's RBAC refused").isEmpty();
  }

  /**
   * The operator's runtime classpath: the test JVM's (surefire's real one when it runs through a
   * manifest-only jar) without the test classes, so the operator's own logback configuration
   * applies.
   */
  static String operatorClasspath() {
    String cp = System.getProperty("surefire.test.class.path");
    if (cp == null || cp.isBlank()) {
      cp = System.getProperty("java.class.path");
    }
    return String.join(
        File.pathSeparator,
        Arrays.stream(cp.split(File.pathSeparator))
            .filter(p -> !p.endsWith("test-classes") && !p.endsWith("test-classes/"))
            .toList());
  }

  /**
   * An env value of the chart: the downward API's name and namespace (and no Node; the Pod's IP is
   * loopback, where this process's outcome port answers), mount paths remapped.
   */
  private static String envValue(EnvVar e, String podName, Path tls) {
    if (e.getValueFrom() != null && e.getValueFrom().getResourceFieldRef() != null) {
      // the container's CPU limit (the probe budget's default): a process has none, blank reads
      // as unset and the budget comes from the JVM's processors
      return "";
    }
    if (e.getValueFrom() != null) {
      String field = e.getValueFrom().getFieldRef().getFieldPath();
      return switch (field) {
        case "metadata.name" -> podName;
        case "metadata.namespace" -> E2eCluster.RELEASE_NAMESPACE;
        // a process runs on no Node: blank reads as unset, so the replica's zone is unknown
        // (no Node read) unless the test passes --zone
        case "spec.nodeName" -> "";
        // the replica's address for its peers (vigil.dev/address on its shard Lease): all the
        // processes share the machine's network, and the outcome port listens on every address
        case "status.podIP" -> "127.0.0.1";
        default -> throw new AssertionError("a downward-API field this test cannot set: " + field);
      };
    }
    String v = e.getValue() == null ? "" : e.getValue();
    return v.startsWith("/var/run/vigil/tls/")
        ? tls.resolve(v.substring("/var/run/vigil/tls/".length())).toString()
        : v;
  }
}
