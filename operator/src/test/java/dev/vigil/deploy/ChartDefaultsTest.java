package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The chart rendered with its default values: what {@code helm install vigil} creates. */
class ChartDefaultsTest {
  private static RenderedChart chart;
  private static Deployment deployment;
  private static Container operator;

  @BeforeAll
  static void render() {
    chart = VigilChart.locate().render("");
    deployment = chart.one(Deployment.class);
    operator = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  @Test
  void runsTwoShardedReplicasSpreadAcrossZonesWithADisruptionBudget() {
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(env())
        .containsEntry("VIGIL_LEADER_ELECTION", "true")
        .containsEntry("VIGIL_SHARDING", "true")
        .containsEntry("VIGIL_SHARD_LEASE_DURATION", "15")
        .containsEntry("VIGIL_SHARD_MOVE_RATE", "10");
    EnvVar podName =
        operator.getEnv().stream()
            .filter(e -> e.getName().equals("POD_NAME"))
            .findFirst()
            .orElseThrow();
    assertThat(podName.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
    EnvVar nodeName =
        operator.getEnv().stream()
            .filter(e -> e.getName().equals("NODE_NAME"))
            .findFirst()
            .orElseThrow();
    assertThat(nodeName.getValueFrom().getFieldRef().getFieldPath())
        .as("the replica's zone is its Node's")
        .isEqualTo("spec.nodeName");
    assertThat(operator.getArgs()).containsExactly("operator", "--lease-name=vigil");
    assertThat(chart.all(PodDisruptionBudget.class)).hasSize(1);
    var spread = deployment.getSpec().getTemplate().getSpec().getTopologySpreadConstraints();
    assertThat(spread).hasSize(1);
    assertThat(spread.get(0).getTopologyKey()).isEqualTo("topology.kubernetes.io/zone");
    assertThat(spread.get(0).getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
    assertThat(spread.get(0).getMaxSkew()).isEqualTo(1);
  }

  @Test
  void theZoneSpreadCanBeTurnedOff() {
    Deployment off = VigilChart.locate().render("zoneSpread: false").one(Deployment.class);
    assertThat(off.getSpec().getTemplate().getSpec().getTopologySpreadConstraints())
        .isNullOrEmpty();
  }

  @Test
  void oneReplicaRunsEveryPoolWithoutSharding() {
    Deployment one = VigilChart.locate().render("replicaCount: 1").one(Deployment.class);
    Container c = one.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(one.getSpec().getReplicas()).isEqualTo(1);
    assertThat(c.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("VIGIL_SHARDING");
              assertThat(e.getValue()).isEqualTo("false");
            });
    assertThat(one.getSpec().getTemplate().getSpec().getTopologySpreadConstraints())
        .isNullOrEmpty();
  }

  @Test
  void passesItsConfigurationAsEnvironment() {
    assertThat(env())
        .containsEntry("VIGIL_NAMESPACES", "")
        .containsEntry("VIGIL_METRICS_PORT", "8080")
        .containsEntry("VIGIL_OUTCOME_PORT", "8443")
        .containsEntry("VIGIL_LOG_FORMAT", "text");
    EnvVar podNamespace =
        operator.getEnv().stream()
            .filter(e -> e.getName().equals("POD_NAMESPACE"))
            .findFirst()
            .orElseThrow();
    assertThat(podNamespace.getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.namespace");
  }

  @Test
  void runsAsNonRootWithReadOnlyRootAndNoCapabilities() {
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    PodSecurityContext podContext = pod.getSecurityContext();
    assertThat(podContext.getRunAsNonRoot()).isTrue();
    assertThat(podContext.getRunAsUser()).isPositive();
    assertThat(podContext.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

    SecurityContext context = operator.getSecurityContext();
    assertThat(context.getRunAsNonRoot()).isTrue();
    assertThat(context.getReadOnlyRootFilesystem()).isTrue();
    assertThat(context.getAllowPrivilegeEscalation()).isFalse();
    assertThat(context.getPrivileged()).isNotEqualTo(Boolean.TRUE);
    assertThat(context.getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(context.getCapabilities().getAdd()).isNullOrEmpty();
    assertThat(context.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

    assertThat(operator.getVolumeMounts())
        .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
    assertThat(pod.getVolumes()).anySatisfy(v -> assertThat(v.getEmptyDir()).isNotNull());
    assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);
  }

  @Test
  void setsRequestsAndLimits() {
    Map<String, Quantity> requests = operator.getResources().getRequests();
    Map<String, Quantity> limits = operator.getResources().getLimits();
    assertThat(requests).containsKeys("cpu", "memory");
    assertThat(limits).containsKeys("cpu", "memory");
    assertThat(Quantity.getAmountInBytes(limits.get("memory")))
        .isGreaterThanOrEqualTo(Quantity.getAmountInBytes(requests.get("memory")));
  }

  @Test
  void probesHealthzForLivenessAndReadyzForReadinessOnThePlainHealthPort() {
    assertThat(operator.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(operator.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(operator.getStartupProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(
            List.of(
                operator.getLivenessProbe().getHttpGet(),
                operator.getReadinessProbe().getHttpGet(),
                operator.getStartupProbe().getHttpGet()))
        .allSatisfy(
            get -> {
              assertThat(get.getPort().getStrVal()).isEqualTo("health");
              assertThat(get.getScheme()).as("plain HTTP for the kubelet").isNull();
            });
    assertThat(operator.getPorts())
        .extracting(p -> p.getName() + "=" + p.getContainerPort())
        .containsExactly("metrics=8080", "outcomes=8443", "health=8081");
  }

  @Test
  void exposesMetricsAndOutcomesOnOneService() {
    Service service = chart.one(Service.class);
    assertThat(service.getSpec().getType()).isEqualTo("ClusterIP");
    assertThat(service.getSpec().getSelector())
        .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
    assertThat(service.getSpec().getPorts())
        .extracting(ServicePort::getName, ServicePort::getPort, p -> p.getTargetPort().getStrVal())
        .containsExactly(tuple("metrics", 8080, "metrics"), tuple("outcomes", 8443, "outcomes"));
  }

  @Test
  void admitsIngressOnlyOnTheMetricsAndOutcomePortsAndOnlyFromLabelledNamespaces() {
    NetworkPolicy policy = chart.one(NetworkPolicy.class);
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .isEqualTo(deployment.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
    assertThat(policy.getSpec().getIngress())
        .extracting(NetworkPolicyIngressRule::getPorts)
        .allSatisfy(ports -> assertThat(ports).hasSize(1))
        .extracting(ports -> ports.get(0).getPort().getStrVal())
        .containsExactly("metrics", "outcomes", "outcomes");
    // the third rule admits OTLP exporters (proxies' namespaces) to the same port
    assertThat(policy.getSpec().getIngress())
        .extracting(rule -> rule.getFrom().get(0).getNamespaceSelector().getMatchLabels())
        .containsExactly(
            Map.of("vigil.dev/metrics-scraper", "true"),
            Map.of("vigil.dev/outcome-reporter", "true"),
            Map.of("vigil.dev/otlp-exporter", "true"));
    assertThat(policy.getSpec().getIngress().get(2).getFrom()).hasSize(1);
    assertThat(policy.getSpec().getIngress().get(0).getFrom()).hasSize(1);
    // sharded by default: the other replicas ask this one to confirm Downs on the outcome port
    assertThat(policy.getSpec().getIngress().get(1).getFrom())
        .hasSize(2)
        .last()
        .satisfies(
            peer -> {
              assertThat(peer.getNamespaceSelector()).isNull();
              assertThat(peer.getPodSelector().getMatchLabels())
                  .isEqualTo(policy.getSpec().getPodSelector().getMatchLabels());
            });
  }

  @Test
  void rendersOnlyFieldsTheKubernetesModelKnows() {
    assertThat(chart.unknownFields()).isEmpty();
  }

  @Test
  void rendersNoPrometheusOperatorObjects() {
    assertThat(chart.ofKind("ServiceMonitor")).isEmpty();
    assertThat(chart.ofKind("PrometheusRule")).isEmpty();
  }

  @Test
  void putsEveryNamespacedObjectInTheReleaseNamespace() {
    assertThat(chart.one(ServiceAccount.class).getMetadata().getName())
        .isEqualTo(deployment.getSpec().getTemplate().getSpec().getServiceAccountName());
    assertThat(chart.objects())
        .filteredOn(o -> o instanceof Namespaced)
        .isNotEmpty()
        .extracting(HasMetadata::getMetadata)
        .allSatisfy(m -> assertThat(m.getNamespace()).isEqualTo(VigilChart.NAMESPACE));
  }

  private static Map<String, String> env() {
    return operator.getEnv().stream()
        .filter(e -> e.getValue() != null)
        .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
  }
}
