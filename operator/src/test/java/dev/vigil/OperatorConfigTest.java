package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.passive.OtlpProfile;
import dev.vigil.probe.transport.SourceAddress;
import dev.vigil.reconcile.TenantFloors;
import dev.vigil.shard.ShardConfig;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OperatorConfigTest {

  private static OperatorConfig parse(List<String> args, Map<String, String> env) {
    return OperatorConfig.parse(args, env);
  }

  @Test
  void defaultsOutsideAClusterElectALeaderInTheInstallsNamespace() {
    assertThat(
            parse(List.of("--tls-cert-file=/tls/tls.crt", "--tls-key-file=/tls/tls.key"), Map.of()))
        .isEqualTo(
            new OperatorConfig(
                Set.of(),
                new OperatorConfig.Leader(true, "vigil", "vigil-system"),
                new OperatorConfig.Metrics(8080, 8081, true),
                new OperatorConfig.Intake(8443, "vigil.dev"),
                new OperatorConfig.Tls("/tls/tls.crt", "/tls/tls.key"),
                new OperatorConfig.Publishing(1000, 200, 400, 50),
                new ShardConfig(false, null, "vigil", "vigil-system", 15, 0.1),
                TenantFloors.NONE,
                new OperatorConfig.Launch("text", false, true),
                dev.vigil.targets.TargetSettings.DEFAULT));
  }

  @Test
  void metricsAreAuthenticatedByDefaultWhenACertificateIsGiven() {
    List<String> tls = List.of("--tls-cert-file=/tls/tls.crt", "--tls-key-file=/tls/tls.key");
    assertThat(parse(tls, Map.of()).metrics().auth()).isTrue();
    assertThat(
            parse(
                    java.util.stream.Stream.concat(
                            tls.stream(), java.util.stream.Stream.of("--metrics-auth=false"))
                        .toList(),
                    Map.of())
                .metrics()
                .auth())
        .as("turned off explicitly")
        .isFalse();
    assertThat(parse(List.of("--outcome-port=-1"), Map.of()).metrics().auth())
        .as("no certificate: plain metrics")
        .isFalse();
  }

  @Test
  void theOutcomePortServesTlsOnlySoItNeedsACertificateAndAKey() {
    assertRefused(
        List.of(),
        Map.of(),
        "the outcome port serves TLS only: set --tls-cert-file and --tls-key-file");
    assertRefused(List.of("--tls-cert-file=/tls/tls.crt"), Map.of(), "--tls-key-file");
    assertThat(parse(List.of("--outcome-port=-1"), Map.of()).tls().certFile()).isNull();
    assertRefused(
        List.of("--outcome-port=-1", "--metrics-auth"),
        Map.of(),
        "--metrics-auth serves the metrics port over TLS");
  }

  @Test
  void reviewsReportersTokensForVigilsAudienceUnlessToldOtherwise() {
    assertThat(parse(List.of("--outcome-port=-1"), Map.of()).intake().tokenAudience())
        .isEqualTo("vigil.dev");
    assertThat(
            parse(List.of("--outcome-port=-1", "--outcome-token-audience=intake.example"), Map.of())
                .intake()
                .tokenAudience())
        .isEqualTo("intake.example");
  }

  @Test
  void inAClusterLeaderElectionIsOnAndTheLeaseLivesInThePodsNamespace() {
    OperatorConfig c =
        parse(
            List.of(),
            Map.of(
                "KUBERNETES_SERVICE_HOST",
                "10.0.0.1",
                "POD_NAMESPACE",
                "vigil-system",
                "VIGIL_OUTCOME_PORT",
                "-1"));
    assertThat(c.leader()).isEqualTo(new OperatorConfig.Leader(true, "vigil", "vigil-system"));
  }

  @Test
  void readsEveryFlagInBothSpellings() {
    OperatorConfig c =
        parse(
            List.of(
                "--namespaces",
                "shop, payments",
                "--metrics-port=9090",
                "--health-port",
                "9091",
                "--outcome-port",
                "-1",
                "--leader-election",
                "--lease-name=vigil.lease",
                "--lease-namespace",
                "ops",
                "--log-format=json",
                "--status-interval-ms",
                "250"),
            Map.of());
    assertThat(c.namespaces()).isEqualTo(Set.of("shop", "payments"));
    assertThat(c.metrics()).isEqualTo(new OperatorConfig.Metrics(9090, 9091, false));
    assertThat(c.intake().port()).isEqualTo(-1);
    assertThat(c.leader()).isEqualTo(new OperatorConfig.Leader(true, "vigil.lease", "ops"));
    assertThat(c.launch().logFormat()).isEqualTo("json");
    assertThat(c.publishing().statusIntervalMs()).isEqualTo(250);
  }

  @Test
  void aDnsServerIsAnAddressAndAPortAndABadOneIsNamed() {
    assertThat(
            OperatorConfig.parse(List.of("--dns-server=[::1]:53", "--outcome-port=-1"), Map.of())
                .targets()
                .dnsServer())
        .isEqualTo(new java.net.InetSocketAddress("::1", 53));
    assertThatThrownBy(
            () ->
                OperatorConfig.parse(
                    List.of("--dns-server=dns.local:53", "--outcome-port=-1"), Map.of()))
        .hasMessageContaining("--dns-server must be IP:PORT");
    assertThatThrownBy(
            () ->
                OperatorConfig.parse(
                    List.of("--refuse-target-networks=10.0.0.0", "--outcome-port=-1"), Map.of()))
        .hasMessageContaining("--refuse-target-networks must be CIDRs");
  }

  @Test
  void everyFlagHasAnEnvironmentVariableAndTheFlagWins() {
    Map<String, String> env = new java.util.HashMap<>();
    env.putAll(
        Map.of(
            "VIGIL_OUTCOME_TOKEN_AUDIENCE", "intake",
            "VIGIL_TLS_CERT_FILE", "/c",
            "VIGIL_TLS_KEY_FILE", "/k",
            "VIGIL_METRICS_AUTH", "true",
            "VIGIL_HEALTH_PORT", "9002"));
    env.putAll(
        Map.of(
            "VIGIL_NAMESPACES", "a,b",
            "VIGIL_METRICS_PORT", "9000",
            "VIGIL_OUTCOME_PORT", "9001",
            "VIGIL_LEADER_ELECTION", "TRUE",
            "VIGIL_LEASE_NAME", "env-lease",
            "VIGIL_LEASE_NAMESPACE", "env-ns",
            "VIGIL_LOG_FORMAT", "json",
            "VIGIL_STATUS_INTERVAL_MS", "500",
            "VIGIL_API_QPS", "50.5",
            "VIGIL_API_BURST", "70"));
    env.put("VIGIL_DEBUG", "false");
    env.put("VIGIL_NAMESPACE_WRITE_QPS", "0");
    env.put("VIGIL_MIN_INTERVAL", "1s");
    env.put("VIGIL_DEFAULT_DAMPING", "true");
    assertThat(parse(List.of("--min-interval=3s"), env).floors())
        .isEqualTo(new TenantFloors(3_000, true));
    env.put("VIGIL_PROBE_TLS_SECRETS", "false");
    assertThat(parse(List.of(), env).floors().probeTlsSecrets()).isFalse();
    assertThat(parse(List.of("--probe-tls-secrets=true"), env).floors().probeTlsSecrets()).isTrue();
    env.put("VIGIL_NATIVE_TRANSPORT", "false");
    env.put("VIGIL_PROBE_SOURCE_ADDRESS", "127.0.0.1");
    env.put("VIGIL_DNS_SERVER", "127.0.0.1:5353");
    env.put("VIGIL_REFUSE_TARGET_NETWORKS", "10.0.0.0/8");
    assertThat(parse(List.of(), env).launch().nativeTransport()).isFalse();
    assertThat(parse(List.of("--native-transport=true"), env).launch().nativeTransport()).isTrue();
    env.putAll(
        Map.of(
            "VIGIL_SHARDING", "true",
            "VIGIL_SHARD_IDENTITY", "vigil-0",
            "VIGIL_SHARD_RING", "blue",
            "VIGIL_SHARD_LEASE_DURATION", "30",
            "VIGIL_SHARD_MOVE_RATE", "25",
            "VIGIL_ZONE", "eu-1a"));
    env.put("VIGIL_ADVERTISE_ADDRESS", "10.1.2.3");
    env.put("VIGIL_PROBE_BUDGET", "1500");
    env.put("VIGIL_CPU_LIMIT_MILLIS", "500");
    env.put("VIGIL_OTLP_CUSTOM_PROFILE", "address=upstream,status=code");
    env.put("VIGIL_INTAKE_CLIENT_CA", "/etc/vigil/client-ca/ca.crt");
    assertThat(parse(List.of(), env))
        .isEqualTo(
            new OperatorConfig(
                Set.of("a", "b"),
                new OperatorConfig.Leader(true, "env-lease", "env-ns"),
                new OperatorConfig.Metrics(9000, 9002, true),
                new OperatorConfig.Intake(
                    9001,
                    "intake",
                    OtlpProfile.custom("address=upstream,status=code"),
                    "/etc/vigil/client-ca/ca.crt"),
                new OperatorConfig.Tls("/c", "/k"),
                new OperatorConfig.Publishing(500, 50.5, 70, 0),
                new ShardConfig(
                    true, "vigil-0", "blue", "env-ns", 30, 0.25, "eu-1a", null, "10.1.2.3"),
                new TenantFloors(1_000, true, false),
                new OperatorConfig.Launch(
                    "json", false, false, SourceAddress.parse("127.0.0.1"), 1500),
                new dev.vigil.targets.TargetSettings(
                    new java.net.InetSocketAddress("127.0.0.1", 5353),
                    dev.vigil.targets.TargetNetworks.parse("10.0.0.0/8"))));
    assertThat(parse(List.of("--metrics-port=7000", "--log-format", "text"), env))
        .satisfies(
            c -> {
              assertThat(c.metrics().port()).isEqualTo(7000);
              assertThat(c.launch().logFormat()).isEqualTo("text");
            });
    assertThat(OperatorConfig.flags())
        .allSatisfy(
            flag -> assertThat(env).containsKey("VIGIL_" + flag.toUpperCase().replace('-', '_')));
  }

  @Test
  void theProbeBudgetDefaultsTo2000PerCoreOfTheCpuLimitAndABadOneNamesItsFlag() {
    assertThat(
            parse(List.of("--outcome-port=-1", "--cpu-limit-millis=500"), Map.of())
                .launch()
                .probeBudget())
        .isEqualTo(1000);
    assertThat(parse(List.of("--outcome-port=-1"), Map.of()).launch().probeBudget())
        .isEqualTo(2000.0 * Runtime.getRuntime().availableProcessors());
    assertThat(
            parse(
                    List.of("--outcome-port=-1", "--probe-budget=300", "--cpu-limit-millis=500"),
                    Map.of())
                .launch()
                .probeBudget())
        .isEqualTo(300);
    assertThatThrownBy(() -> parse(List.of("--outcome-port=-1", "--probe-budget=0"), Map.of()))
        .hasMessageContaining("--probe-budget");
    assertThatThrownBy(
            () -> parse(List.of("--outcome-port=-1", "--cpu-limit-millis=lots"), Map.of()))
        .hasMessageContaining("--cpu-limit-millis");
  }

  @Test
  void anEmptyVariableMeansItsDefault() {
    OperatorConfig c =
        parse(
            List.of(),
            Map.of(
                "VIGIL_NAMESPACES",
                "",
                "VIGIL_METRICS_PORT",
                "",
                "VIGIL_LEASE_NAMESPACE",
                "",
                "VIGIL_OUTCOME_PORT",
                "-1"));
    assertThat(c.namespaces()).isEmpty();
    assertThat(c.metrics().port()).isEqualTo(8080);
    assertThat(c.leader().leaseNamespace()).isEqualTo("vigil-system");
  }

  @Test
  void badValuesAreRefusedWithAMessageNamingTheFlag() {
    assertRefused(
        List.of("--otlp-custom-profile=status=code"),
        Map.of(),
        "--otlp-custom-profile: field 'address' is required");
    assertRefused(
        List.of("--metrics-port", "http"),
        Map.of(),
        "--metrics-port must be a port 0..65535, got http");
    assertRefused(List.of("--metrics-port=70000"), Map.of(), "--metrics-port");
    assertRefused(
        List.of("--outcome-port=-2"),
        Map.of(),
        "--outcome-port must be a port 0..65535 or -1 (off), got -2");
    assertRefused(
        List.of("--leader-election=yes"),
        Map.of(),
        "--leader-election must be true or false, got yes");
    assertRefused(
        List.of("--log-format=xml"), Map.of(), "--log-format must be text or json, got xml");
    assertRefused(
        List.of("--status-interval-ms=0"),
        Map.of(),
        "--status-interval-ms must be a positive number");
    assertRefused(List.of("--api-qps=0"), Map.of(), "--api-qps must be a positive number, got 0");
    assertRefused(List.of("--api-qps=NaN"), Map.of(), "--api-qps must be a positive number");
    assertRefused(List.of("--api-burst=-3"), Map.of(), "--api-burst must be a positive number");
    assertRefused(
        List.of("--namespace-write-qps=-1"),
        Map.of(),
        "--namespace-write-qps must be a number >= 0 (0: no cap), got -1");
    assertRefused(List.of("--namespaces=Shop"), Map.of(), "--namespaces must be a Kubernetes name");
    assertRefused(
        List.of("--lease-name=vigil_leader"), Map.of(), "--lease-name must be a Kubernetes name");
    assertRefused(
        List.of("--lease-namespace=a.b"), Map.of(), "--lease-namespace must be a Kubernetes name");
    assertRefused(
        List.of("--metrics-port=9000", "--outcome-port=9000"),
        Map.of(),
        "--metrics-port and --outcome-port must differ");
    assertRefused(
        List.of("--metrics-port=9000", "--health-port=9000"),
        Map.of(),
        "--health-port must differ from --metrics-port and --outcome-port, got 9000");
    assertRefused(List.of("--health-port=-2"), Map.of(), "--health-port must be a port");
    assertRefused(
        List.of(),
        Map.of("VIGIL_LOG_FORMAT", "yaml"),
        "--log-format must be text or json, got yaml");
  }

  @Test
  void debugIsOffUnlessAskedFor() {
    assertThat(launch(List.of(), Map.of()).debug()).isFalse();
    assertThat(launch(List.of("--debug"), Map.of()).debug()).isTrue();
    assertThat(launch(List.of(), Map.of("VIGIL_DEBUG", "true")).debug()).isTrue();
    assertThat(launch(List.of("--debug=false"), Map.of("VIGIL_DEBUG", "true")).debug()).isFalse();
    assertRefused(List.of("--debug=maybe"), Map.of(), "--debug must be true or false");
  }

  @Test
  void nativeTransportIsOnUnlessTurnedOff() {
    assertThat(launch(List.of(), Map.of()).nativeTransport()).isTrue();
    assertThat(launch(List.of("--native-transport=false"), Map.of()).nativeTransport()).isFalse();
    assertThat(launch(List.of(), Map.of("VIGIL_NATIVE_TRANSPORT", "false")).nativeTransport())
        .isFalse();
    assertRefused(
        List.of("--native-transport=epoll"), Map.of(), "--native-transport must be true or false");
  }

  @Test
  void probeSourceAddressIsNoneUnlessGivenAndMustBeAnAddressOfThisHost() {
    assertThat(launch(List.of(), Map.of()).probeSource()).isEqualTo(SourceAddress.KERNEL);
    assertThat(launch(List.of("--probe-source-address=127.0.0.2"), Map.of()).probeSource())
        .isEqualTo(SourceAddress.parse("127.0.0.2"));
    assertThat(
            launch(List.of(), Map.of("VIGIL_PROBE_SOURCE_ADDRESS", "::1")).probeSource().address())
        .isEqualTo(SourceAddress.parse("::1").address());
    assertThat(launch(List.of(), Map.of("VIGIL_PROBE_SOURCE_ADDRESS", "")).probeSource())
        .as("an empty variable (a chart's unset value) is the default")
        .isEqualTo(SourceAddress.KERNEL);
    assertRefused(
        List.of("--probe-source-address=zone-b.example"),
        Map.of(),
        "--probe-source-address must be an IPv4 or IPv6 address, got zone-b.example");
    assertRefused(
        List.of("--probe-source-address=0.0.0.0"),
        Map.of(),
        "--probe-source-address must be a unicast address of this host");
    assertRefused(
        List.of("--probe-source-address=192.0.2.77"),
        Map.of(),
        "--probe-source-address must be an address of this host, got 192.0.2.77");
  }

  @Test
  void tenantFloorFlagsAreCheckedAndNamed() {
    assertThat(floors(List.of(), Map.of())).isEqualTo(TenantFloors.NONE);
    assertThat(floors(List.of("--min-interval=2s", "--default-damping=true"), Map.of()))
        .isEqualTo(new TenantFloors(2_000, true));
    assertThat(floors(List.of(), Map.of("VIGIL_MIN_INTERVAL", "500ms")).minIntervalMs())
        .isEqualTo(500);
    assertThatThrownBy(() -> floors(List.of("--min-interval=50ms"), Map.of()))
        .isInstanceOf(OperatorConfig.InvalidConfigException.class)
        .hasMessageContaining("--min-interval must be at least 100ms");
    assertThatThrownBy(() -> floors(List.of("--min-interval=soon"), Map.of()))
        .isInstanceOf(OperatorConfig.InvalidConfigException.class)
        .hasMessageContaining("--min-interval must be a duration");
    assertThatThrownBy(() -> floors(List.of("--default-damping=yes"), Map.of()))
        .hasMessageContaining("--default-damping must be true or false");
  }

  @Test
  void shardingFlagsAreCheckedAndNamed() {
    Map<String, String> pod = Map.of("POD_NAME", "vigil-7d9-abc");
    assertThat(shards(List.of("--sharding"), pod))
        .as("the shard Leases live beside the leader Lease")
        .isEqualTo(new ShardConfig(true, "vigil-7d9-abc", "vigil", "ns", 15, 0.1));
    assertThat(shards(List.of(), pod).enabled()).isFalse();
    assertThatThrownBy(() -> shards(List.of("--sharding"), Map.of()))
        .isInstanceOf(OperatorConfig.InvalidConfigException.class)
        .hasMessageContaining("--shard-identity");
    assertThatThrownBy(() -> shards(List.of("--shard-move-rate=150"), pod))
        .hasMessageContaining("--shard-move-rate must be a percentage 0..100");
    assertThatThrownBy(() -> shards(List.of("--shard-lease-duration=2"), pod))
        .hasMessageContaining("--shard-lease-duration must be 3..3600 seconds");
    assertThatThrownBy(() -> shards(List.of("--sharding", "--shard-identity=Not_A_Name"), pod))
        .hasMessageContaining("--shard-identity must be a label value");
  }

  @Test
  void unknownFlagsAndStrayArgumentsAreRefused() {
    assertRefused(
        List.of("--metric-port=1"), Map.of(), "unknown flag --metric-port; known: --namespaces");
    assertRefused(List.of("shop"), Map.of(), "unexpected argument: shop");
  }

  @Test
  void aFlagThatTakesAValueNeedsOneAndASwitchAloneIsTrue() {
    assertRefused(List.of("--api-qps"), Map.of(), "--api-qps needs a value");
    assertRefused(List.of("--namespaces", "--debug"), Map.of(), "--namespaces needs a value");
    OperatorConfig c =
        parse(List.of("--debug", "--lease-name", "l", "--outcome-port", "-1"), Map.of());
    assertThat(c.launch().debug()).isTrue();
    assertThat(c.leader().leaseName()).isEqualTo("l");
  }

  @Test
  void usageNamesEveryFlagAndItsVariable() {
    for (String flag : OperatorConfig.flags()) {
      assertThat(OperatorConfig.usage())
          .contains("--" + flag + " ")
          .contains("VIGIL_" + flag.toUpperCase().replace('-', '_'));
    }
  }

  @Test
  void bothPortsZeroMeanFreePortsAndDoNotClash() {
    assertThat(
            parse(
                    List.of(
                        "--metrics-port=0",
                        "--outcome-port=0",
                        "--tls-cert-file=c",
                        "--tls-key-file=k"),
                    Map.of())
                .metrics()
                .port())
        .isZero();
  }

  /** The settings of {@code args} with the outcome port off (it needs certificates). */
  private static OperatorConfig plain(List<String> args, Map<String, String> env) {
    return parse(
        java.util.stream.Stream.concat(
                args.stream(), java.util.stream.Stream.of("--outcome-port=-1"))
            .toList(),
        env);
  }

  private static OperatorConfig.Launch launch(List<String> args, Map<String, String> env) {
    return plain(args, env).launch();
  }

  private static TenantFloors floors(List<String> args, Map<String, String> env) {
    return plain(args, env).floors();
  }

  @Test
  void theZoneIsTheFlagWhenGivenElseTheNodeToReadItFrom() {
    Map<String, String> pod = Map.of("POD_NAME", "vigil-0", "NODE_NAME", "node-1");
    ShardConfig fromNode = shards(List.of("--sharding"), pod);
    assertThat(fromNode.zone()).isNull();
    assertThat(fromNode.nodeName()).isEqualTo("node-1");
    ShardConfig given = shards(List.of("--sharding", "--zone=eu-west-1a"), pod);
    assertThat(given.zone()).isEqualTo("eu-west-1a");
    assertThat(
            shards(List.of("--sharding"), Map.of("POD_NAME", "p", "VIGIL_ZONE", "Zone_B")).zone())
        .isEqualTo("Zone_B");
    assertThat(shards(List.of("--sharding"), Map.of("POD_NAME", "p")).nodeName()).isNull();
    assertThatThrownBy(() -> shards(List.of("--sharding", "--zone=eu west"), pod))
        .isInstanceOf(OperatorConfig.InvalidConfigException.class)
        .hasMessageContaining("--zone must be a label value");
    assertThatThrownBy(() -> shards(List.of("--zone=-a"), pod))
        .hasMessageContaining("--zone must be a label value");
  }

  @Test
  void theAdvertisedAddressIsTheFlagElsePodIpAndOnlyAnIpLiteral() {
    Map<String, String> pod = Map.of("POD_NAME", "vigil-0", "POD_IP", "10.0.0.7");
    assertThat(shards(List.of("--sharding"), pod).advertiseAddress()).isEqualTo("10.0.0.7");
    assertThat(shards(List.of("--sharding", "--advertise-address=fd00::7"), pod).advertiseAddress())
        .isEqualTo("fd00:0:0:0:0:0:0:7");
    assertThat(shards(List.of("--sharding"), Map.of("POD_NAME", "p")).advertiseAddress()).isNull();
    for (String bad : List.of("vigil.example.com", "10.0.0.300", "10.0.0")) {
      assertThatThrownBy(() -> shards(List.of("--sharding", "--advertise-address=" + bad), pod))
          .as(bad)
          .isInstanceOf(OperatorConfig.InvalidConfigException.class)
          .hasMessageContaining("--advertise-address (or POD_IP) must be an IPv4 or IPv6 address");
    }
  }

  private static ShardConfig shards(List<String> args, Map<String, String> env) {
    return plain(
            java.util.stream.Stream.concat(
                    args.stream(), java.util.stream.Stream.of("--lease-namespace=ns"))
                .toList(),
            env)
        .shards();
  }

  @Test
  void embeddedSettingsStartFromFreePortsAndTakeFlags() {
    OperatorConfig c = OperatorConfig.embedded("--namespaces=shop", "--status-interval-ms=200");
    assertThat(c.metrics()).isEqualTo(new OperatorConfig.Metrics(0, -1, false));
    assertThat(c.intake().port()).as("a throwaway certificate, none required").isZero();
    assertThat(c.tls().given()).isFalse();
    assertThat(c.leader()).isEqualTo(new OperatorConfig.Leader(false, "vigil", "default"));
    assertThat(c.namespaces()).containsExactly("shop");
    assertThat(c.publishing().statusIntervalMs()).isEqualTo(200);
    assertThat(OperatorConfig.embedded("--tls-cert-file=c", "--tls-key-file=k").metrics().auth())
        .as("plain metrics unless asked, as the demo scrapes them")
        .isFalse();
    assertThat(OperatorConfig.embedded("--metrics-auth=true").metrics().auth()).isTrue();
    assertThatThrownBy(() -> OperatorConfig.embedded("--metrics-port=x"))
        .hasMessageContaining("--metrics-port must be a port");
  }

  @Test
  void usageListsEveryFlagOnceInTheTablesLayout() {
    String usage = OperatorConfig.usage();
    for (String flag : OperatorConfig.flags()) {
      assertThat(usage.lines().filter(l -> l.startsWith("  --" + flag + " ")).count())
          .as(flag)
          .isOne();
    }
    assertThat(usage)
        .contains(
            "  --namespaces NS[,NS...]      VIGIL_NAMESPACES\n"
                + "      namespaces to watch (default: all)\n")
        .contains("  --debug                      VIGIL_DEBUG\n")
        .contains("  -h, --help\n      this text\n");
  }

  private static void assertRefused(List<String> args, Map<String, String> env, String message) {
    assertThatThrownBy(() -> parse(args, env))
        .isInstanceOf(OperatorConfig.InvalidConfigException.class)
        .hasMessageContaining(message);
  }
}
