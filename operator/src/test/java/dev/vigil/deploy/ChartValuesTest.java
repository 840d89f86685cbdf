package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The chart rendered with the options a production install turns on. */
class ChartValuesTest {
  private static final String HIGH_AVAILABILITY =
      """
      replicaCount: 2
      watchNamespaces: [shop, payments]
      logFormat: json
      serviceMonitor:
        enabled: true
        labels: {release: prometheus}
      prometheusRule:
        enabled: true
      networkPolicy:
        outcomes:
          from:
            - namespaceSelector:
                matchLabels: {vigil.dev/reporters: "true"}
      """;

  private static VigilChart vigil;
  private static RenderedChart chart;
  private static Deployment deployment;

  @BeforeAll
  static void render() {
    vigil = VigilChart.locate();
    chart = vigil.render(HIGH_AVAILABILITY);
    deployment = chart.one(Deployment.class);
  }

  @Test
  void runsTwoReplicasSpreadAcrossNodesWithADisruptionBudget() {
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(env(deployment)).containsEntry("VIGIL_LEADER_ELECTION", "true");
    PodDisruptionBudget pdb = chart.one(PodDisruptionBudget.class);
    assertThat(pdb.getSpec().getMinAvailable().getIntVal()).isEqualTo(1);
    assertThat(pdb.getSpec().getSelector().getMatchLabels())
        .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
    assertThat(
            deployment
                .getSpec()
                .getTemplate()
                .getSpec()
                .getAffinity()
                .getPodAntiAffinity()
                .getPreferredDuringSchedulingIgnoredDuringExecution())
        .singleElement()
        .satisfies(
            term ->
                assertThat(term.getPodAffinityTerm().getTopologyKey())
                    .isEqualTo("kubernetes.io/hostname"));
  }

  @Test
  void rendersOnlyFieldsTheKubernetesModelKnows() {
    assertThat(chart.unknownFields()).isEmpty();
  }

  @Test
  void passesTheNamespaceListAndJsonLogs() {
    assertThat(env(deployment))
        .containsEntry("VIGIL_NAMESPACES", "shop,payments")
        .containsEntry("VIGIL_LOG_FORMAT", "json");
  }

  @Test
  void scrapesTheMetricsPortWithAServiceMonitor() {
    GenericKubernetesResource monitor = generic("ServiceMonitor");
    Service service = chart.one(Service.class);
    assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
    assertThat(monitor.<Map<String, String>>get("spec", "selector", "matchLabels"))
        .isNotEmpty()
        .allSatisfy((k, v) -> assertThat(service.getMetadata().getLabels()).containsEntry(k, v));
    List<Map<String, Object>> endpoints = monitor.get("spec", "endpoints");
    assertThat(endpoints)
        .singleElement()
        .satisfies(
            e ->
                assertThat(e)
                    .containsEntry("port", "metrics")
                    .containsEntry("path", "/metrics")
                    // the pool metrics keep their own namespace label, not exported_namespace
                    .containsEntry("honorLabels", true));
  }

  @Test
  void shipsTheGrafanaDashboardForTheSidecarWhenAsked() throws java.io.IOException {
    RenderedChart withDashboard =
        vigil.render(
            "grafanaDashboard: {enabled: true, namespace: monitoring,"
                + " annotations: {grafana_folder: Vigil}}");
    io.fabric8.kubernetes.api.model.ConfigMap map =
        withDashboard.require(io.fabric8.kubernetes.api.model.ConfigMap.class, "vigil-dashboard");
    assertThat(map.getMetadata().getNamespace()).isEqualTo("monitoring");
    assertThat(map.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
    assertThat(map.getMetadata().getAnnotations()).containsEntry("grafana_folder", "Vigil");
    String committed =
        java.nio.file.Files.readString(vigil.repoRoot().resolve(MonitoringQueries.DASHBOARD));
    assertThat(map.getData().get("vigil-dashboard.json")).isEqualTo(committed.strip());
    assertThat(chart.named(io.fabric8.kubernetes.api.model.ConfigMap.class, "vigil-dashboard"))
        .isEmpty();
  }

  @Test
  void alertsOnPanicRefusedEjectionsPublishingTheIntakeASuspectCheckerAndAMissingOperator() {
    List<Map<String, Object>> groups = generic("PrometheusRule").get("spec", "groups");
    @SuppressWarnings("unchecked")
    Map<String, String> exprByAlert =
        groups.stream()
            .flatMap(g -> ((List<Map<String, Object>>) g.get("rules")).stream())
            .collect(Collectors.toMap(r -> (String) r.get("alert"), r -> (String) r.get("expr")));
    assertThat(exprByAlert)
        .containsOnlyKeys(
            "VigilPoolInPanic",
            "VigilEjectionsRefused",
            "VigilSlicePublishingFailing",
            "VigilOutcomeRequestsRefused",
            "VigilOutcomesRejected",
            "VigilCheckerSuspect",
            "VigilProbeBudgetExceeded",
            "VigilOperatorDown");
    assertThat(exprByAlert.get("VigilProbeBudgetExceeded"))
        .isEqualTo("vigil_probe_budget_exceeded > 0");
    assertThat(exprByAlert.get("VigilSlicePublishingFailing"))
        .contains("vigil_slice_publish_failures_total");
    assertThat(exprByAlert.get("VigilOutcomeRequestsRefused"))
        .contains("vigil_outcome_requests_total{code=~\"4..\"}")
        .endsWith("> 0.1");
    assertThat(exprByAlert.get("VigilOutcomesRejected")).contains("vigil_outcomes_rejected_total");
    assertThat(exprByAlert.get("VigilPoolInPanic")).contains("vigil_pool_panic");
    assertThat(exprByAlert.get("VigilEjectionsRefused")).contains("vigil_ejections_refused_total");
    assertThat(exprByAlert.get("VigilCheckerSuspect")).isEqualTo("vigil_checker_suspect > 0");
    assertThat(exprByAlert.get("VigilOperatorDown"))
        .isEqualTo("absent(up{job=\"vigil\",namespace=\"vigil-system\"} == 1)");
  }

  @Test
  void restrictsOutcomeReportersToTheGivenPeers() {
    NetworkPolicy policy = chart.one(NetworkPolicy.class);
    assertThat(policy.getSpec().getIngress()).hasSize(3);
    assertThat(policy.getSpec().getIngress().get(1).getPorts().get(0).getPort().getStrVal())
        .isEqualTo("outcomes");
    assertThat(policy.getSpec().getIngress().get(1).getFrom())
        .filteredOn(peer -> peer.getNamespaceSelector() != null)
        .extracting(peer -> peer.getNamespaceSelector().getMatchLabels())
        .containsExactly(
            java.util.Map.of("vigil.dev/outcome-reporter", "true"),
            java.util.Map.of("vigil.dev/reporters", "true"));
  }

  /**
   * Unsharded with more than one replica, the standbys forward outcomes to the leader's outcome
   * port: the NetworkPolicy admits the other replicas there, as sharded; one replica has no peers.
   */
  @Test
  void admitsTheOtherReplicasToTheOutcomePortUnshardedToo() {
    for (String values : List.of("sharding: {enabled: false}", "replicaCount: 1")) {
      NetworkPolicy policy = vigil.render(values).one(NetworkPolicy.class);
      List<Map<String, String>> pods =
          policy.getSpec().getIngress().get(1).getFrom().stream()
              .filter(peer -> peer.getPodSelector() != null)
              .map(peer -> peer.getPodSelector().getMatchLabels())
              .toList();
      if (values.startsWith("replicaCount")) {
        assertThat(pods).as(values).isEmpty();
      } else {
        assertThat(pods)
            .as(values)
            .containsExactly(policy.getSpec().getPodSelector().getMatchLabels());
      }
    }
  }

  @Test
  void dropsTheLeaseWhenLeaderElectionIsOff() {
    Deployment single =
        vigil.render("replicaCount: 1\nleaderElection: {enabled: false}").one(Deployment.class);
    Container operator = single.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(operator.getArgs()).containsExactly("operator");
    assertThat(env(single)).containsEntry("VIGIL_LEADER_ELECTION", "false");
  }

  @Test
  void refusesTwoReplicasWithoutLeaderElection() {
    assertThatThrownBy(() -> vigil.template("replicaCount: 2\nleaderElection: {enabled: false}"))
        .hasMessageContaining("replicaCount > 1 requires leaderElection.enabled=true");
  }

  @Test
  void refusesAnUnknownLogFormat() {
    assertThatThrownBy(() -> vigil.template("logFormat: xml"))
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining("logFormat");
  }

  @Test
  void refusesAMisspeltOptionInsteadOfIgnoringIt() {
    assertThatThrownBy(() -> vigil.template("replicas: 2")).hasMessageContaining("replicas");
    assertThatThrownBy(() -> vigil.template("leaderElection: {enable: false}"))
        .hasMessageContaining("enable");
  }

  @Test
  void refusesAnOutOfRangePort() {
    assertThatThrownBy(() -> vigil.template("metrics: {port: 70000}"))
        .hasMessageContaining("/metrics/port");
    assertThatThrownBy(() -> vigil.template("metrics: {port: 8443}"))
        .hasMessageContaining("metrics.port and outcomes.port must differ");
    assertThatThrownBy(() -> vigil.template("probes: {port: 8080}"))
        .hasMessageContaining("probes.port must differ from metrics.port and outcomes.port");
  }

  @Test
  void rendersNoNetworkPolicyWhenDisabled() {
    RenderedChart open = vigil.render("networkPolicy: {enabled: false}");
    assertThat(open.all(NetworkPolicy.class)).isEmpty();
    assertThat(open.all(Deployment.class)).hasSize(1);
  }

  private static GenericKubernetesResource generic(String kind) {
    List<HasMetadata> found = chart.ofKind(kind);
    assertThat(found).singleElement().isInstanceOf(GenericKubernetesResource.class);
    return (GenericKubernetesResource) found.get(0);
  }

  private static Map<String, String> env(Deployment deployment) {
    return deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
        .filter(e -> e.getValue() != null)
        .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
  }
}
