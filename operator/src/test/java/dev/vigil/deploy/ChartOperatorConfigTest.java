package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.OperatorConfig;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The chart's container args and environment, fed to {@link OperatorConfig#parse} as the operator
 * reads them at start: every variable is one the operator knows, and the values arrive as set.
 */
class ChartOperatorConfigTest {
  private static final VigilChart CHART = VigilChart.locate();

  @Test
  void defaultInstallParsesToTheChartsValues() {
    Container c = operatorContainer("");
    OperatorConfig config = parse(c);

    assertThat(c.getArgs().get(0)).isEqualTo("operator");
    assertThat(config.namespaces()).isEmpty();
    assertThat(config.leader().election()).isTrue();
    assertThat(config.leader().leaseNamespace()).isEqualTo(VigilChart.NAMESPACE);
    assertThat(config.launch().logFormat()).isEqualTo("text");
    assertThat(config.publishing().apiQps()).isEqualTo(OperatorConfig.DEFAULT_API_QPS);
    assertThat(config.publishing().apiBurst()).isEqualTo(OperatorConfig.DEFAULT_API_BURST);
    assertThat(config.metrics().port()).isEqualTo(containerPort(c, "metrics"));
    assertThat(config.intake().port()).isEqualTo(containerPort(c, "outcomes"));
    assertThat(config.metrics().healthPort()).isEqualTo(containerPort(c, "health"));
  }

  @Test
  void nonDefaultValuesReachTheOperator() {
    Container c =
        operatorContainer(
            """
            watchNamespaces: [shop, payments]
            logFormat: json
            apiWrites: {qps: 50, burst: 120}
            metrics:
              port: 9090
            outcomes:
              port: 9443
            probes:
              port: 9081
            """);
    OperatorConfig config = parse(c);

    assertThat(config.namespaces()).isEqualTo(Set.of("shop", "payments"));
    assertThat(config.launch().logFormat()).isEqualTo("json");
    assertThat(config.publishing().apiQps()).isEqualTo(50.0);
    assertThat(config.publishing().apiBurst()).isEqualTo(120);
    assertThat(config.metrics().port()).isEqualTo(9090).isEqualTo(containerPort(c, "metrics"));
    assertThat(config.intake().port()).isEqualTo(9443).isEqualTo(containerPort(c, "outcomes"));
    assertThat(config.metrics().healthPort()).isEqualTo(9081).isEqualTo(containerPort(c, "health"));
  }

  @Test
  void nativeTransportIsOnByDefaultAndTheValueTurnsItOff() {
    assertThat(parse(operatorContainer("")).launch().nativeTransport()).isTrue();
    assertThat(parse(operatorContainer("nativeTransport: false")).launch().nativeTransport())
        .isFalse();
  }

  @Test
  void tenantFloorsAreOffByDefaultAndTheValuesReachTheOperator() {
    assertThat(parse(operatorContainer("")).floors())
        .isEqualTo(dev.vigil.reconcile.TenantFloors.NONE);
    Container c =
        operatorContainer(
            """
            tenantFloors: {minInterval: 2s, defaultDamping: true}
            """);
    assertThat(parse(c).floors()).isEqualTo(new dev.vigil.reconcile.TenantFloors(2_000, true));
  }

  /**
   * Probe TLS: Secrets readable by default (labelled ones); the value removes grant and reading.
   */
  @Test
  void probeTlsSecretsAreReadByDefaultAndTheValueTurnsGrantAndReadingOff() {
    assertThat(parse(operatorContainer("")).floors().probeTlsSecrets()).isTrue();
    assertThat(secretRules("")).isNotEmpty();
    assertThat(
            parse(operatorContainer("probeTls: {readSecrets: false}")).floors().probeTlsSecrets())
        .isFalse();
    assertThat(secretRules("probeTls: {readSecrets: false}")).isEmpty();
  }

  private static List<io.fabric8.kubernetes.api.model.rbac.PolicyRule> secretRules(String values) {
    return CHART.render(values).all(io.fabric8.kubernetes.api.model.rbac.ClusterRole.class).stream()
        .flatMap(r -> r.getRules().stream())
        .filter(rule -> rule.getResources().contains("secrets"))
        .toList();
  }

  @Test
  void theProbeBudgetFollowsTheCpuLimitUnlessTheValueSetsIt() {
    EnvVar cpu =
        operatorContainer("").getEnv().stream()
            .filter(e -> e.getName().equals("VIGIL_CPU_LIMIT_MILLIS"))
            .findFirst()
            .orElseThrow();
    assertThat(cpu.getValueFrom().getResourceFieldRef().getResource()).isEqualTo("limits.cpu");
    assertThat(cpu.getValueFrom().getResourceFieldRef().getDivisor().toString()).isEqualTo("1m");
    Container set = operatorContainer("probeBudget: 3000");
    assertThat(set.getEnv()).noneMatch(e -> e.getName().equals("VIGIL_CPU_LIMIT_MILLIS"));
    assertThat(parse(set).launch().probeBudget()).isEqualTo(3000);
  }

  @Test
  void targetSettingsAreTheOperatorsDefaultsUnlessTheValuesSaySo() {
    assertThat(parse(operatorContainer("")).targets())
        .isEqualTo(dev.vigil.targets.TargetSettings.DEFAULT);
    Container c =
        operatorContainer(
            """
            targets: {dnsServer: "10.96.0.10:53", refuseNetworks: "10.0.0.0/8"}
            """);
    assertThat(parse(c).targets())
        .isEqualTo(
            new dev.vigil.targets.TargetSettings(
                new java.net.InetSocketAddress("10.96.0.10", 53),
                dev.vigil.targets.TargetNetworks.parse("10.0.0.0/8")));
  }

  @Test
  void everyVigilVariableOfTheChartIsAFlagTheOperatorKnows() {
    List<String> known =
        OperatorConfig.usage().lines().map(String::strip).filter(l -> l.startsWith("--")).toList();
    for (EnvVar e : operatorContainer("").getEnv()) {
      if (e.getName().startsWith("VIGIL_")) {
        assertThat(known)
            .anySatisfy(line -> assertThat(line + " ").contains(" " + e.getName() + " "));
      }
    }
  }

  /** The container's args and env as the operator reads them in the release namespace. */
  static OperatorConfig parse(Container c) {
    List<String> args = c.getArgs();
    return OperatorConfig.parse(args.subList(1, args.size()), env(c));
  }

  private static Map<String, String> env(Container c) {
    Map<String, String> env = new HashMap<>();
    env.put("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    for (EnvVar e : c.getEnv()) {
      if (e.getValueFrom() != null
          && e.getValueFrom().getFieldRef() != null
          && "metadata.namespace".equals(e.getValueFrom().getFieldRef().getFieldPath())) {
        env.put(e.getName(), VigilChart.NAMESPACE);
      } else if (e.getValueFrom() != null
          && e.getValueFrom().getFieldRef() != null
          && "metadata.name".equals(e.getValueFrom().getFieldRef().getFieldPath())) {
        env.put(e.getName(), "vigil-7d9-abc");
      } else if (e.getValue() != null) {
        env.put(e.getName(), e.getValue());
      }
    }
    return env;
  }

  private static int containerPort(Container c, String name) {
    return c.getPorts().stream()
        .filter(p -> name.equals(p.getName()))
        .map(ContainerPort::getContainerPort)
        .findFirst()
        .orElseThrow();
  }

  private static Container operatorContainer(String values) {
    Deployment d = CHART.render(values).one(Deployment.class);
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> "operator".equals(c.getName()))
        .findFirst()
        .orElseThrow();
  }
}
