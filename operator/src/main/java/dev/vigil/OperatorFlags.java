package dev.vigil;

import dev.vigil.flags.FlagParser;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Every flag of {@code vigil operator}, in one table that drives parsing (which names exist, the
 * variable each falls back to), {@code --help} (the text below) and the docs check ({@code
 * DocsTest} matches the docs' flags against that text). A flag added here is parsed, listed and
 * checked; {@link OperatorConfig} reads its value.
 */
final class OperatorFlags {
  /**
   * One flag.
   *
   * @param name without {@code --}
   * @param argument the placeholder shown after it in the help, empty for none
   * @param help one or more lines, the default in parentheses
   */
  record Flag(String name, String argument, String help) {
    /** The environment variable a flag falls back to: {@code --api-qps}, {@code VIGIL_API_QPS}. */
    String variable() {
      return "VIGIL_" + name.toUpperCase().replace('-', '_');
    }

    private String usage() {
      String head = String.format("  %-28s %s", "--" + name + " " + argument, variable());
      return head.stripTrailing()
          + "\n"
          + help.lines().map(l -> "      " + l + "\n").collect(Collectors.joining());
    }
  }

  static final List<Flag> ALL =
      List.of(
          new Flag("namespaces", "NS[,NS...]", "namespaces to watch (default: all)"),
          new Flag(
              "metrics-port",
              "PORT",
              "/metrics, /healthz, /readyz (default 8080; 0 = any free port)"),
          new Flag(
              "health-port",
              "PORT",
              """
              /healthz and /readyz in plain HTTP for the kubelet
              (default 8081; 0 = any free port; -1 = off)"""),
          new Flag(
              "outcome-port",
              "PORT",
              """
              passive outcome intake, TLS only
              (default 8443; 0 = any free port; -1 = off)"""),
          new Flag(
              "outcome-token-audience",
              "A",
              "reporters' tokens must be minted for A (default vigil.dev)"),
          new Flag(
              "otlp-custom-profile",
              "SPEC",
              """
              the OTLP receiver's custom profile: address=ATTR,status=ATTR
              [,answer=ATTR][,flags=ATTR][,duration=ATTR][,durationUnit=ns|us|ms|s]
              (docs/passive.md)"""),
          new Flag(
              "intake-client-ca",
              "FILE",
              """
              PEM CA bundle: the outcome port asks callers for a client certificate
              and takes one these CAs issued as the caller (CN = user, O = groups)
              instead of a token; re-read when it changes (default none: tokens only)"""),
          new Flag(
              "tls-cert-file",
              "FILE",
              """
              PEM certificate of the outcome port, re-read when it changes
              (required with the port)"""),
          new Flag(
              "tls-key-file",
              "FILE",
              """
              PEM private key of the outcome port, re-read when it changes
              (required with the port)"""),
          new Flag(
              "metrics-auth",
              "BOOL",
              """
              metrics port over TLS; /metrics only for get on /metrics (TokenReview,
              SubjectAccessReview) (default true when --tls-cert-file and
              --tls-key-file are set, else false)"""),
          new Flag("leader-election", "BOOL", "one active replica via a Lease (default true)"),
          new Flag("lease-name", "NAME", "the Lease's name (default vigil)"),
          new Flag(
              "lease-namespace",
              "NS",
              "the Lease's namespace (default: $POD_NAMESPACE, else vigil-system)"),
          new Flag("log-format", "FORMAT", "text or json (default text)"),
          new Flag(
              "status-interval-ms",
              "MS",
              "at most one status write per pool per MS (default 1000)"),
          new Flag(
              "min-interval",
              "DURATION",
              """
              floor of every policy's probe intervals; lower ones are raised to it
              (default 100ms)"""),
          new Flag(
              "default-damping",
              "BOOL",
              """
              flap damping with the default parameters for policies without a
              damping block (default false)"""),
          new Flag(
              "probe-tls-secrets",
              "BOOL",
              """
              read client certificates for probe TLS from Secrets labelled
              vigil.dev/probe-tls=true (default true; false: no Secret is read)"""),
          new Flag(
              "api-qps",
              "N",
              """
              write budget: API writes per second, in the order Leases, moves,
              slices, status, Events
              (default 200)"""),
          new Flag(
              "api-burst", "N", "write budget: writes at once after a quiet spell (default 400)"),
          new Flag(
              "namespace-write-qps",
              "N",
              """
              one namespace's cap: slice updates and status writes a second each,
              however idle the budget; 0 = none (default 50)"""),
          new Flag(
              "sharding",
              "BOOL",
              """
              every replica probes the pools the leader assigns it (shard Leases;
              default false; the chart turns it on with more than one replica)"""),
          new Flag(
              "shard-identity",
              "NAME",
              "this replica's shard name (default: $POD_NAME, else $HOSTNAME)"),
          new Flag(
              "shard-ring", "NAME", "the vigil.dev/ring label of the shard Leases (default vigil)"),
          new Flag(
              "shard-lease-duration",
              "S",
              """
              shard Lease duration in seconds; renewed every third, writes stop after
              two thirds unrenewed (default 15)"""),
          new Flag(
              "shard-move-rate",
              "PCT",
              """
              planned pool moves per minute, percent of all pools (default 10;
              0 = no limit; a dead replica's pools move at once)"""),
          new Flag(
              "zone",
              "ZONE",
              """
              this replica's zone on its shard Lease, for quorum across zones
              (default: its Node's topology.kubernetes.io/zone, read through
              $NODE_NAME; else unknown)"""),
          new Flag(
              "advertise-address",
              "IP",
              """
              the address other replicas ask this one at (on --outcome-port) to
              confirm a Down across zones (default: $POD_IP; unset: it is not asked)"""),
          new Flag(
              "native-transport",
              "BOOL",
              """
              Netty's epoll transport for probes and all other I/O; NIO when off or
              where epoll cannot load (default true)"""),
          new Flag(
              "probe-source-address",
              "IP",
              """
              every active probe's connection leaves from this address of the host
              (default: none, the kernel picks by route)"""),
          new Flag(
              "probe-budget",
              "N",
              """
              probes a second this replica may make; over it, intervals stretch
              (docs/checks.md, probe budget) (default: 2000 per core of
              --cpu-limit-millis, else of the JVM's processors)"""),
          new Flag(
              "cpu-limit-millis",
              "N",
              """
              the container's CPU limit in millicores, for --probe-budget's default
              (the chart sets it from the Pod's limit)"""),
          new Flag(
              "dns-server",
              "IP:PORT",
              """
              the nameserver BackendPool hostname targets are resolved with
              (default: those of /etc/resolv.conf)"""),
          new Flag(
              "refuse-target-networks",
              "CIDR[,CIDR...]",
              """
              networks no BackendPool target may be in, or none (default: loopback,
              link-local, unspecified and multicast, IPv4 and IPv6)"""),
          new Flag("debug", "", "stack traces with start-up errors (default false)"));

  private OperatorFlags() {}

  /**
   * The values given, by flag name: a flag ({@code --name value}, {@code --name=value}, or a
   * switch's {@code --name} alone for {@code true}, read by {@link FlagParser}) wins over its
   * variable; null when neither is set.
   */
  static Map<String, String> read(List<String> args, Map<String, String> env) {
    Map<String, String> values = new HashMap<>();
    for (Flag f : ALL) {
      if (env.containsKey(f.variable())) {
        values.put(f.name(), env.get(f.variable()));
      }
    }
    values.putAll(given(args));
    return values;
  }

  /** Flags with an argument of {@code BOOL} or none are switches: alone, they mean true. */
  private static final FlagParser PARSER =
      FlagParser.listingKnownFlags(
          ALL.stream()
              .collect(
                  Collectors.toMap(
                      Flag::name,
                      f ->
                          f.argument().isEmpty() || f.argument().equals("BOOL")
                              ? FlagParser.Kind.SWITCH
                              : FlagParser.Kind.VALUE,
                      (a, b) -> a,
                      LinkedHashMap::new)));

  private static Map<String, String> given(List<String> args) {
    try {
      return PARSER.parse(args);
    } catch (IllegalArgumentException e) {
      throw new OperatorConfig.InvalidConfigException(e.getMessage());
    }
  }

  static List<String> names() {
    return ALL.stream().map(Flag::name).toList();
  }

  /** The text of {@code vigil operator --help}: every flag, its variable and its default. */
  static String usage() {
    return """
        usage: vigil operator [flags]

        Each flag can also be set by the environment variable shown after it; a flag
        wins over the variable.

        """
        + ALL.stream().map(Flag::usage).collect(Collectors.joining())
        + """
          -h, --help
              this text

        At start the operator checks, within 5 s (30 s in a Pod), that the API server
        answers and serves Vigil's CRDs, and exits 1 with the kubeconfig, the server and
        the cause when it does not.
        """;
  }
}
