package dev.vigil;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The operator's settings, from flags ({@code --name value} or {@code --name=value}) with
 * environment variables ({@code VIGIL_NAME}) as fallback, validated at start with a message that
 * names the flag.
 *
 * @param namespaces namespaces to watch; empty = all
 * @param metricsPort serves /metrics, /healthz and /readyz; 0 = a free port
 * @param outcomePort the passive outcome intake; 0 = a free port, -1 = off
 * @param leaderElection one active replica via a Lease; on by default everywhere, since another
 *     replica can exist wherever the operator runs (a rollout's new Pod, an installed Vigil next to
 *     one started from a laptop)
 * @param leaseName the Lease's name
 * @param leaseNamespace the Lease's namespace (in a cluster: the Pod's own; outside one: {@code
 *     vigil-system}, the namespace of the documented install, so a replica started by hand waits
 *     behind an installed Vigil instead of writing beside it)
 * @param logFormat {@code text} or {@code json}
 * @param statusIntervalMs at most one status write per pool per this many ms
 * @param apiQps the write budget's sustained rate (writes per second to the API server)
 * @param apiBurst the write budget's bucket: writes allowed at once after a quiet spell
 * @param outcomeTokenAudience reporters' tokens must be minted for this audience (TokenReview
 *     {@code spec.audiences}); a token for the API server is refused
 * @param tlsCertFile PEM certificate (chain) of the outcome port, re-read on rotation; null with
 *     {@code tlsKeyFile}: a throwaway self-signed certificate (tests and the demo only: {@link
 *     #parse} requires both files when the outcome port is on)
 * @param tlsKeyFile PEM private key for {@code tlsCertFile}
 * @param metricsAuth the metrics port serves TLS (the same certificate) and {@code /metrics} only
 *     to callers allowed {@code get} on the non-resource URL {@code /metrics}; on by default when a
 *     certificate and key are given
 * @param healthPort serves /healthz and /readyz in plain HTTP for the kubelet; 0 = a free port, -1
 *     = off (they stay on the metrics port as well)
 */
public record OperatorConfig(
    Set<String> namespaces,
    int metricsPort,
    int outcomePort,
    boolean leaderElection,
    String leaseName,
    String leaseNamespace,
    String logFormat,
    long statusIntervalMs,
    double apiQps,
    int apiBurst,
    String outcomeTokenAudience,
    String tlsCertFile,
    String tlsKeyFile,
    boolean metricsAuth,
    int healthPort) {

  /** The audience reporters' tokens are reviewed for unless {@code --outcome-token-audience}. */
  public static final String DEFAULT_AUDIENCE = "vigil.dev";

  /** Settings with the default audience and a throwaway certificate (tests, the demo). */
  public OperatorConfig(
      Set<String> namespaces,
      int metricsPort,
      int outcomePort,
      boolean leaderElection,
      String leaseName,
      String leaseNamespace,
      String logFormat,
      long statusIntervalMs,
      double apiQps,
      int apiBurst) {
    this(
        namespaces,
        metricsPort,
        outcomePort,
        leaderElection,
        leaseName,
        leaseNamespace,
        logFormat,
        statusIntervalMs,
        apiQps,
        apiBurst,
        DEFAULT_AUDIENCE,
        null,
        null,
        false,
        -1);
  }

  /** The same settings serving the outcome port with these PEM files. */
  public OperatorConfig withTls(String certFile, String keyFile) {
    return new OperatorConfig(
        namespaces,
        metricsPort,
        outcomePort,
        leaderElection,
        leaseName,
        leaseNamespace,
        logFormat,
        statusIntervalMs,
        apiQps,
        apiBurst,
        outcomeTokenAudience,
        certFile,
        keyFile,
        metricsAuth,
        healthPort);
  }

  /** The write budget's defaults: a 1,000-transition burst publishes within about 2 s. */
  public static final double DEFAULT_API_QPS = 200;

  public static final int DEFAULT_API_BURST = 400;

  /** Settings with the default write budget. */
  public OperatorConfig(
      Set<String> namespaces,
      int metricsPort,
      int outcomePort,
      boolean leaderElection,
      String leaseName,
      String leaseNamespace,
      String logFormat,
      long statusIntervalMs) {
    this(
        namespaces,
        metricsPort,
        outcomePort,
        leaderElection,
        leaseName,
        leaseNamespace,
        logFormat,
        statusIntervalMs,
        DEFAULT_API_QPS,
        DEFAULT_API_BURST);
  }

  /** The same settings with the metrics port secured (TLS, authorized /metrics) or not. */
  public OperatorConfig withMetricsAuth(boolean on) {
    return new OperatorConfig(
        namespaces,
        metricsPort,
        outcomePort,
        leaderElection,
        leaseName,
        leaseNamespace,
        logFormat,
        statusIntervalMs,
        apiQps,
        apiBurst,
        outcomeTokenAudience,
        tlsCertFile,
        tlsKeyFile,
        on,
        healthPort);
  }

  /** The same settings with /healthz and /readyz on their own plain port (0: a free one). */
  public OperatorConfig withHealthPort(int port) {
    return new OperatorConfig(
        namespaces,
        metricsPort,
        outcomePort,
        leaderElection,
        leaseName,
        leaseNamespace,
        logFormat,
        statusIntervalMs,
        apiQps,
        apiBurst,
        outcomeTokenAudience,
        tlsCertFile,
        tlsKeyFile,
        metricsAuth,
        port);
  }

  /** A bad flag or variable; the message names it. */
  public static final class InvalidConfigException extends IllegalArgumentException {
    public InvalidConfigException(String message) {
      super(message);
    }
  }

  private static final List<String> FLAGS =
      List.of(
          "namespaces",
          "metrics-port",
          "health-port",
          "outcome-port",
          "leader-election",
          "lease-name",
          "lease-namespace",
          "log-format",
          "status-interval-ms",
          "api-qps",
          "api-burst",
          "outcome-token-audience",
          "tls-cert-file",
          "tls-key-file",
          "metrics-auth",
          "sharding",
          "shard-identity",
          "shard-ring",
          "shard-lease-duration",
          "shard-move-rate",
          "native-transport",
          "min-interval",
          "default-damping",
          "debug");

  /** The Lease's namespace outside a cluster: where the README and the chart install Vigil. */
  public static final String DEFAULT_LEASE_NAMESPACE = "vigil-system";

  /**
   * The leader Lease's name: the chart's (its full name, "vigil" for the release the docs install),
   * the plain manifests' and the OLM bundle's, so a replica started by hand waits behind an
   * installed one instead of leading beside it ({@code LeaseNameTest} holds them equal).
   */
  public static final String DEFAULT_LEASE_NAME = "vigil";

  /** {@code --debug} ({@code VIGIL_DEBUG}): stack traces with start-up errors. */
  public static boolean debug(List<String> args, Map<String, String> env) {
    Map<String, String> flags = flagValues(args);
    String v = flags.containsKey("debug") ? flags.get("debug") : env.get("VIGIL_DEBUG");
    return bool("debug", or(v, "false"));
  }

  /**
   * {@code --native-transport} ({@code VIGIL_NATIVE_TRANSPORT}): Netty's epoll transport for all
   * network I/O (default true; Vert.x falls back to NIO where epoll cannot load).
   */
  public static boolean nativeTransport(List<String> args, Map<String, String> env) {
    Map<String, String> flags = flagValues(args);
    String v =
        flags.containsKey("native-transport")
            ? flags.get("native-transport")
            : env.get("VIGIL_NATIVE_TRANSPORT");
    return bool("native-transport", or(v, "true"));
  }

  /**
   * The scale-out flags ({@code --sharding} and {@code --shard-*}, docs/design.md §7), parsed apart
   * from the rest so the record stays as it is; the shard Leases live beside the leader Lease.
   */
  public static dev.vigil.shard.ShardConfig sharding(
      List<String> args, Map<String, String> env, String leaseNamespace) {
    Map<String, String> flags = flagValues(args);
    try {
      return dev.vigil.shard.ShardConfig.parse(
          name -> {
            String v = flags.get(name);
            return v != null ? v : env.get("VIGIL_" + name.toUpperCase().replace('-', '_'));
          },
          env::get,
          leaseNamespace);
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(e.getMessage());
    }
  }

  /**
   * The admin's floors for tenants' policies ({@code --min-interval}, {@code --default-damping},
   * issue 31), parsed apart from the rest so the record stays as it is.
   */
  public static dev.vigil.reconcile.TenantFloors floors(
      List<String> args, Map<String, String> env) {
    Map<String, String> flags = flagValues(args);
    try {
      return dev.vigil.reconcile.TenantFloors.parse(
          name -> {
            String v = flags.get(name);
            return v != null ? v : env.get("VIGIL_" + name.toUpperCase().replace('-', '_'));
          });
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(e.getMessage());
    }
  }

  private static Map<String, String> flagValues(List<String> args) {
    Map<String, String> flags = new java.util.HashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (!a.startsWith("--")) {
        throw new InvalidConfigException("unexpected argument: " + a);
      }
      String name = a.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else if (i + 1 < args.size() && !args.get(i + 1).startsWith("--")) {
        value = args.get(++i);
      } else {
        value = "true";
      }
      if (!FLAGS.contains(name)) {
        throw new InvalidConfigException(
            "unknown flag --" + name + "; known: --" + String.join(", --", FLAGS));
      }
      flags.put(name, value);
    }
    return flags;
  }

  public static OperatorConfig parse(List<String> args, Map<String, String> env) {
    Map<String, String> flags = flagValues(args);
    debug(args, env);
    java.util.function.Function<String, String> get =
        name -> {
          String v = flags.get(name);
          if (v == null) {
            v = env.get("VIGIL_" + name.toUpperCase().replace('-', '_'));
          }
          return v;
        };
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
    String leaseNamespace = get.apply("lease-namespace");
    if (leaseNamespace == null || leaseNamespace.isBlank()) {
      leaseNamespace = or(env.get("POD_NAMESPACE"), DEFAULT_LEASE_NAMESPACE);
    }
    name("lease-namespace", leaseNamespace, DNS_LABEL);
    String leaseName =
        name("lease-name", or(get.apply("lease-name"), DEFAULT_LEASE_NAME), DNS_SUBDOMAIN);
    String logFormat = or(get.apply("log-format"), "text");
    if (!logFormat.equals("text") && !logFormat.equals("json")) {
      throw new InvalidConfigException("--log-format must be text or json, got " + logFormat);
    }
    int metricsPort = port("metrics-port", or(get.apply("metrics-port"), "8080"), false);
    int outcomePort = port("outcome-port", or(get.apply("outcome-port"), "8443"), true);
    int healthPort = port("health-port", or(get.apply("health-port"), "8081"), true);
    if (metricsPort > 0 && metricsPort == outcomePort) {
      throw new InvalidConfigException(
          "--metrics-port and --outcome-port must differ, both are " + metricsPort);
    }
    if (healthPort > 0 && (healthPort == metricsPort || healthPort == outcomePort)) {
      throw new InvalidConfigException(
          "--health-port must differ from --metrics-port and --outcome-port, got " + healthPort);
    }
    String audience = or(get.apply("outcome-token-audience"), DEFAULT_AUDIENCE).trim();
    String certFile = get.apply("tls-cert-file");
    String keyFile = get.apply("tls-key-file");
    boolean noCert = certFile == null || certFile.isBlank();
    boolean noKey = keyFile == null || keyFile.isBlank();
    OperatorConfig config =
        new OperatorConfig(
            namespaces,
            metricsPort,
            outcomePort,
            bool("leader-election", or(get.apply("leader-election"), "true")),
            leaseName,
            leaseNamespace,
            logFormat,
            positive("status-interval-ms", or(get.apply("status-interval-ms"), "1000")),
            qps(or(get.apply("api-qps"), Double.toString(DEFAULT_API_QPS))),
            (int)
                Math.min(
                    Integer.MAX_VALUE,
                    positive("api-burst", or(get.apply("api-burst"), "" + DEFAULT_API_BURST))),
            audience,
            noCert ? null : certFile,
            noKey ? null : keyFile,
            bool("metrics-auth", or(get.apply("metrics-auth"), "" + !(noCert || noKey))),
            healthPort);
    if (config.metricsAuth() && (noCert || noKey)) {
      throw new InvalidConfigException(
          "--metrics-auth serves the metrics port over TLS: set --tls-cert-file and --tls-key-file");
    }
    if (outcomePort >= 0 && (noCert || noKey)) {
      throw new InvalidConfigException(
          "the outcome port serves TLS only: set --tls-cert-file and --tls-key-file (PEM, e.g."
              + " a kubernetes.io/tls Secret's tls.crt and tls.key), or --outcome-port -1");
    }
    return config;
  }

  private static final java.util.regex.Pattern DNS_LABEL =
      java.util.regex.Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final java.util.regex.Pattern DNS_SUBDOMAIN =
      java.util.regex.Pattern.compile(
          "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private static String name(String flag, String v, java.util.regex.Pattern pattern) {
    if (!pattern.matcher(v).matches()) {
      throw new InvalidConfigException(
          "--" + flag + " must be a Kubernetes name (lowercase letters, digits and '-'), got " + v);
    }
    return v;
  }

  /** The text of {@code vigil operator --help}: every flag, its variable and its default. */
  public static String usage() {
    return """
        usage: vigil operator [flags]

        Each flag can also be set by the environment variable shown after it; a flag
        wins over the variable.

          --namespaces NS[,NS...]      VIGIL_NAMESPACES
              namespaces to watch (default: all)
          --metrics-port PORT          VIGIL_METRICS_PORT
              /metrics, /healthz, /readyz (default 8080; 0 = any free port)
          --health-port PORT           VIGIL_HEALTH_PORT
              /healthz and /readyz in plain HTTP for the kubelet
              (default 8081; 0 = any free port; -1 = off)
          --outcome-port PORT          VIGIL_OUTCOME_PORT
              passive outcome intake, TLS only
              (default 8443; 0 = any free port; -1 = off)
          --outcome-token-audience A   VIGIL_OUTCOME_TOKEN_AUDIENCE
              reporters' tokens must be minted for A (default vigil.dev)
          --tls-cert-file FILE         VIGIL_TLS_CERT_FILE
              PEM certificate of the outcome port, re-read when it changes
              (required with the port)
          --tls-key-file FILE          VIGIL_TLS_KEY_FILE
              PEM private key of the outcome port, re-read when it changes
              (required with the port)
          --metrics-auth BOOL          VIGIL_METRICS_AUTH
              metrics port over TLS; /metrics only for get on /metrics (TokenReview,
              SubjectAccessReview) (default true when --tls-cert-file and
              --tls-key-file are set, else false)
          --leader-election BOOL       VIGIL_LEADER_ELECTION
              one active replica via a Lease (default true)
          --lease-name NAME            VIGIL_LEASE_NAME
              the Lease's name (default vigil)
          --lease-namespace NS         VIGIL_LEASE_NAMESPACE
              the Lease's namespace (default: $POD_NAMESPACE, else vigil-system)
          --log-format FORMAT          VIGIL_LOG_FORMAT
              text or json (default text)
          --status-interval-ms MS      VIGIL_STATUS_INTERVAL_MS
              at most one status write per pool per MS (default 1000)
          --min-interval DURATION      VIGIL_MIN_INTERVAL
              floor of every policy's probe intervals; lower ones are raised to it
              (default 100ms)
          --default-damping BOOL       VIGIL_DEFAULT_DAMPING
              flap damping with the default parameters for policies without a
              damping block (default false)
          --api-qps N                  VIGIL_API_QPS
              write budget: API writes per second, in the order Leases, moves,
              slices, status, Events
              (default 200)
          --api-burst N                VIGIL_API_BURST
              write budget: writes at once after a quiet spell (default 400)
          --sharding BOOL              VIGIL_SHARDING
              every replica probes the pools the leader assigns it (shard Leases;
              default false; the chart turns it on with more than one replica)
          --shard-identity NAME        VIGIL_SHARD_IDENTITY
              this replica's shard name (default: $POD_NAME, else $HOSTNAME)
          --shard-ring NAME            VIGIL_SHARD_RING
              the vigil.dev/ring label of the shard Leases (default vigil)
          --shard-lease-duration S     VIGIL_SHARD_LEASE_DURATION
              shard Lease duration in seconds; renewed every third, writes stop after
              two thirds unrenewed (default 15)
          --shard-move-rate PCT        VIGIL_SHARD_MOVE_RATE
              planned pool moves per minute, percent of all pools (default 10;
              0 = no limit; a dead replica's pools move at once)
          --native-transport BOOL      VIGIL_NATIVE_TRANSPORT
              Netty's epoll transport for probes and all other I/O; NIO when off or
              where epoll cannot load (default true)
          --debug                      VIGIL_DEBUG
              stack traces with start-up errors (default false)
          -h, --help
              this text

        At start the operator checks, within 5 s (30 s in a Pod), that the API server
        answers and serves Vigil's CRDs, and exits 1 with the kubeconfig, the server and
        the cause when it does not.
        """;
  }

  private static String or(String v, String fallback) {
    return v == null || v.isBlank() ? fallback : v;
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

  /** Defaults for tests and the demo: all namespaces, free ports, no leader election. */
  public static OperatorConfig forTests() {
    return new OperatorConfig(Set.of(), 0, 0, false, DEFAULT_LEASE_NAME, "default", "text", 1000);
  }

  static List<String> flags() {
    return new ArrayList<>(FLAGS);
  }
}
