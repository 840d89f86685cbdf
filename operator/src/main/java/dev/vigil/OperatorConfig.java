package dev.vigil;

import dev.vigil.probe.transport.SourceAddress;
import dev.vigil.reconcile.TenantFloors;
import dev.vigil.shard.ShardConfig;
import dev.vigil.targets.TargetSettings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The operator's settings, grouped by concern, from the flags of {@link OperatorFlags} ({@code
 * --name value} or {@code --name=value}) with environment variables ({@code VIGIL_NAME}) as
 * fallback, validated at start with a message that names the flag.
 *
 * @param namespaces namespaces to watch; empty = all
 * @param leader leader election and its Lease
 * @param metrics the ops server: /metrics, /healthz, /readyz
 * @param intake the passive outcome intake
 * @param tls the certificate of the outcome port (and of the metrics port with {@code
 *     metrics.auth})
 * @param publishing the write budget and the status cadence
 * @param shards scale-out ({@code --sharding}, {@code --shard-*}); its namespace is the leader
 *     Lease's
 * @param floors the admin's floors for tenants' policies ({@code --min-interval}, {@code
 *     --default-damping})
 * @param launch how the process runs: logs, stack traces, network transport
 * @param targets {@code spec.targets}: {@code --dns-server}, {@code --refuse-target-networks}
 */
public record OperatorConfig(
    Set<String> namespaces,
    Leader leader,
    Metrics metrics,
    Intake intake,
    Tls tls,
    Publishing publishing,
    ShardConfig shards,
    TenantFloors floors,
    Launch launch,
    TargetSettings targets) {

  /**
   * @param election one active replica via a Lease; on by default everywhere, since another replica
   *     can exist wherever the operator runs (a rollout's new Pod, an installed Vigil next to one
   *     started from a laptop)
   * @param leaseName the Lease's name
   * @param leaseNamespace the Lease's namespace (in a cluster: the Pod's own; outside one: {@code
   *     vigil-system}, the namespace of the documented install, so a replica started by hand waits
   *     behind an installed Vigil instead of writing beside it)
   */
  public record Leader(boolean election, String leaseName, String leaseNamespace) {}

  /**
   * @param port serves /metrics, /healthz and /readyz; 0 = a free port
   * @param healthPort serves /healthz and /readyz in plain HTTP for the kubelet; 0 = a free port,
   *     -1 = off (they stay on the metrics port as well)
   * @param auth the metrics port serves TLS (the outcome port's certificate) and {@code /metrics}
   *     only to callers allowed {@code get} on the non-resource URL {@code /metrics}; on by default
   *     when a certificate and key are given
   */
  public record Metrics(int port, int healthPort, boolean auth) {}

  /**
   * @param port the passive outcome intake; 0 = a free port, -1 = off
   * @param tokenAudience reporters' tokens must be minted for this audience (TokenReview {@code
   *     spec.audiences}); a token for the API server is refused
   * @param otlpCustom the OTLP receiver's {@code custom} profile ({@code --otlp-custom-profile}),
   *     or null
   * @param clientCaFile PEM CA bundle whose client certificates identify callers ({@code
   *     --intake-client-ca}, re-read when it changes), or null: tokens only
   */
  public record Intake(
      int port,
      String tokenAudience,
      dev.vigil.passive.OtlpProfile otlpCustom,
      String clientCaFile) {
    public Intake(int port, String tokenAudience) {
      this(port, tokenAudience, null, null);
    }

    public Intake(int port, String tokenAudience, dev.vigil.passive.OtlpProfile otlpCustom) {
      this(port, tokenAudience, otlpCustom, null);
    }
  }

  /**
   * @param certFile PEM certificate (chain), re-read on rotation; null with {@code keyFile}: a
   *     throwaway self-signed certificate (only {@link #embedded}: {@link #parse} requires both
   *     files when a port serves TLS)
   * @param keyFile PEM private key for {@code certFile}
   */
  public record Tls(String certFile, String keyFile) {
    public boolean given() {
      return certFile != null && keyFile != null;
    }
  }

  /**
   * @param statusIntervalMs at most one status write per pool per this many ms
   * @param apiQps the write budget's sustained rate (writes per second to the API server)
   * @param apiBurst the write budget's bucket: writes allowed at once after a quiet spell
   * @param namespaceWriteQps one namespace's cap, slice updates and status writes a second each,
   *     however idle the budget (0: none)
   */
  public record Publishing(
      long statusIntervalMs, double apiQps, int apiBurst, double namespaceWriteQps) {}

  /**
   * @param logFormat {@code text} or {@code json}
   * @param debug stack traces with start-up errors
   * @param nativeTransport Netty's epoll transport for all network I/O (Vert.x falls back to NIO
   *     where epoll cannot load)
   * @param probeSource the local address every active probe binds to ({@code
   *     --probe-source-address}), {@link SourceAddress#KERNEL} by default
   * @param probeBudget probes a second this replica may make ({@code --probe-budget}, {@link
   *     ProbeBudgetSetting})
   */
  public record Launch(
      String logFormat,
      boolean debug,
      boolean nativeTransport,
      SourceAddress probeSource,
      double probeBudget) {
    /** Probes from the kernel's choice of source address. */
    public Launch(String logFormat, boolean debug, boolean nativeTransport) {
      this(logFormat, debug, nativeTransport, SourceAddress.KERNEL);
    }

    /** With the default probe budget of this machine. */
    public Launch(
        String logFormat, boolean debug, boolean nativeTransport, SourceAddress probeSource) {
      this(logFormat, debug, nativeTransport, probeSource, ProbeBudgetSetting.forThisMachine());
    }
  }

  /** The audience reporters' tokens are reviewed for unless {@code --outcome-token-audience}. */

  /** The write budget's defaults: a 1,000-transition burst publishes within about 2 s. */
  public static final double DEFAULT_API_QPS = 200;

  public static final int DEFAULT_API_BURST = 400;

  /**
   * One namespace's cap on slice updates (and on status writes) a second: a quarter of the budget.
   */
  public static final double DEFAULT_NAMESPACE_WRITE_QPS = 50;

  /** The Lease's namespace outside a cluster: where the README and the chart install Vigil. */
  public static final String DEFAULT_LEASE_NAMESPACE = "vigil-system";

  /**
   * The leader Lease's name: the chart's (its full name, "vigil" for the release the docs install),
   * the plain manifests' and the OLM bundle's, so a replica started by hand waits behind an
   * installed one instead of leading beside it ({@code LeaseNameTest} holds them equal).
   */
  public static final String DEFAULT_LEASE_NAME = "vigil";

  /** What an operator embedded in a JVM starts from unless its flags say otherwise. */
  private static final List<String> EMBEDDED =
      List.of(
          "--metrics-port=0",
          "--outcome-port=0",
          "--health-port=-1",
          "--metrics-auth=false",
          "--leader-election=false",
          "--lease-namespace=default");

  /** A bad flag or variable; the message names it. */
  public static final class InvalidConfigException extends IllegalArgumentException {
    public InvalidConfigException(String message) {
      super(message);
    }
  }

  /** The settings of {@code vigil operator}: flags, then variables, then defaults. */
  public static OperatorConfig parse(List<String> args, Map<String, String> env) {
    return parse(args, env, true);
  }

  /**
   * Settings for an operator embedded in a JVM (tests, the demo): all namespaces, free ports, plain
   * metrics (even with certificate files), no leader election, Leases in {@code default}, a
   * throwaway certificate for the outcome port unless files are given; then {@code flags} as on the
   * command line (no variable is read).
   */
  public static OperatorConfig embedded(String... flags) {
    return parse(Stream.concat(EMBEDDED.stream(), Arrays.stream(flags)).toList(), Map.of(), false);
  }

  private static OperatorConfig parse(
      List<String> args, Map<String, String> env, boolean requireCertificate) {
    Map<String, String> values = OperatorFlags.read(args, env);
    Function<String, String> get = values::get;
    Launch launch = launch(get);
    Set<String> namespaces = namespaces(get);
    Leader leader = leader(get, env);
    Intake intake =
        new Intake(
            port("outcome-port", or(get.apply("outcome-port"), "8443"), true),
            or(
                    get.apply("outcome-token-audience"),
                    dev.vigil.security.Fabric8Reviewer.DEFAULT_AUDIENCE)
                .trim(),
            blankToNull(get.apply("otlp-custom-profile")) == null
                ? null
                : named(
                    () -> dev.vigil.passive.OtlpProfile.custom(get.apply("otlp-custom-profile"))),
            blankToNull(get.apply("intake-client-ca")));
    Tls tls =
        new Tls(blankToNull(get.apply("tls-cert-file")), blankToNull(get.apply("tls-key-file")));
    Metrics metrics = metrics(get, intake.port(), tls.given());
    OperatorConfig config =
        new OperatorConfig(
            namespaces,
            leader,
            metrics,
            intake,
            tls,
            publishing(get),
            named(() -> ShardConfig.parse(get, env::get, leader.leaseNamespace())),
            named(() -> TenantFloors.parse(get)),
            launch,
            named(() -> TargetSettings.parse(get)));
    if (requireCertificate) {
      config.requireCertificate();
    }
    return config;
  }

  /** A port that serves TLS needs the certificate's files (only embedded ones make their own). */
  private void requireCertificate() {
    if (metrics.auth() && !tls.given()) {
      throw new InvalidConfigException(
          "--metrics-auth serves the metrics port over TLS: set --tls-cert-file and --tls-key-file");
    }
    if (intake.port() >= 0 && !tls.given()) {
      throw new InvalidConfigException(
          "the outcome port serves TLS only: set --tls-cert-file and --tls-key-file (PEM, e.g."
              + " a kubernetes.io/tls Secret's tls.crt and tls.key), or --outcome-port -1");
    }
  }

  private static Set<String> namespaces(Function<String, String> get) {
    String ns = get.apply("namespaces");
    Set<String> namespaces =
        ns == null || ns.isBlank()
            ? Set.of()
            : Arrays.stream(ns.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .collect(Collectors.toUnmodifiableSet());
    for (String n : namespaces) {
      name("namespaces", n, DNS_LABEL);
    }
    return namespaces;
  }

  private static Leader leader(Function<String, String> get, Map<String, String> env) {
    String leaseNamespace = get.apply("lease-namespace");
    if (leaseNamespace == null || leaseNamespace.isBlank()) {
      leaseNamespace = or(env.get("POD_NAMESPACE"), DEFAULT_LEASE_NAMESPACE);
    }
    name("lease-namespace", leaseNamespace, DNS_LABEL);
    return new Leader(
        bool("leader-election", or(get.apply("leader-election"), "true")),
        name("lease-name", or(get.apply("lease-name"), DEFAULT_LEASE_NAME), DNS_SUBDOMAIN),
        leaseNamespace);
  }

  private static Metrics metrics(Function<String, String> get, int outcomePort, boolean tls) {
    int metricsPort = port("metrics-port", or(get.apply("metrics-port"), "8080"), false);
    int healthPort = port("health-port", or(get.apply("health-port"), "8081"), true);
    if (metricsPort > 0 && metricsPort == outcomePort) {
      throw new InvalidConfigException(
          "--metrics-port and --outcome-port must differ, both are " + metricsPort);
    }
    if (healthPort > 0 && (healthPort == metricsPort || healthPort == outcomePort)) {
      throw new InvalidConfigException(
          "--health-port must differ from --metrics-port and --outcome-port, got " + healthPort);
    }
    return new Metrics(
        metricsPort, healthPort, bool("metrics-auth", or(get.apply("metrics-auth"), "" + tls)));
  }

  private static Publishing publishing(Function<String, String> get) {
    return new Publishing(
        positive("status-interval-ms", or(get.apply("status-interval-ms"), "1000")),
        qps(or(get.apply("api-qps"), Double.toString(DEFAULT_API_QPS))),
        (int)
            Math.min(
                Integer.MAX_VALUE,
                positive("api-burst", or(get.apply("api-burst"), "" + DEFAULT_API_BURST))),
        namespaceQps(
            or(get.apply("namespace-write-qps"), Double.toString(DEFAULT_NAMESPACE_WRITE_QPS))));
  }

  private static Launch launch(Function<String, String> get) {
    String logFormat = or(get.apply("log-format"), "text");
    if (!logFormat.equals("text") && !logFormat.equals("json")) {
      throw new InvalidConfigException("--log-format must be text or json, got " + logFormat);
    }
    return new Launch(
        logFormat,
        bool("debug", or(get.apply("debug"), "false")),
        bool("native-transport", or(get.apply("native-transport"), "true")),
        probeSource(get.apply("probe-source-address")),
        ProbeBudgetSetting.parse(get));
  }

  private static SourceAddress probeSource(String v) {
    if (v == null || v.isBlank()) {
      return SourceAddress.KERNEL;
    }
    try {
      return SourceAddress.parse(v).requireBindable();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException("--probe-source-address " + e.getMessage());
    }
  }

  /** Runs a group's own parser, whose messages already name the flag. */
  private static <T> T named(java.util.function.Supplier<T> parse) {
    try {
      return parse.get();
    } catch (InvalidConfigException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(e.getMessage());
    }
  }

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile(
          "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private static String name(String flag, String v, Pattern pattern) {
    if (!pattern.matcher(v).matches()) {
      throw new InvalidConfigException(
          "--" + flag + " must be a Kubernetes name (lowercase letters, digits and '-'), got " + v);
    }
    return v;
  }

  /** The text of {@code vigil operator --help}: every flag, its variable and its default. */
  public static String usage() {
    return OperatorFlags.usage();
  }

  private static String or(String v, String fallback) {
    return v == null || v.isBlank() ? fallback : v;
  }

  private static String blankToNull(String v) {
    return v == null || v.isBlank() ? null : v;
  }

  private static int port(String flag, String v, boolean allowOff) {
    try {
      int p = Integer.parseInt(v);
      if ((p >= 0 && p <= 65535) || (allowOff && p == -1)) {
        return p;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidConfigException(
        "--" + flag + " must be a port 0..65535" + (allowOff ? " or -1 (off)" : "") + ", got " + v);
  }

  private static boolean bool(String flag, String v) {
    if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(v);
    }
    throw new InvalidConfigException("--" + flag + " must be true or false, got " + v);
  }

  private static double qps(String v) {
    try {
      double q = Double.parseDouble(v);
      if (q > 0 && Double.isFinite(q)) {
        return q;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidConfigException("--api-qps must be a positive number, got " + v);
  }

  private static double namespaceQps(String v) {
    try {
      double q = Double.parseDouble(v);
      if (q >= 0 && Double.isFinite(q)) {
        return q;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidConfigException(
        "--namespace-write-qps must be a number >= 0 (0: no cap), got " + v);
  }

  private static long positive(String flag, String v) {
    try {
      long n = Long.parseLong(v);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidConfigException("--" + flag + " must be a positive number, got " + v);
  }

  static List<String> flags() {
    return new ArrayList<>(OperatorFlags.names());
  }
}
