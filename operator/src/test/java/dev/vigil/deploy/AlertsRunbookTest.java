package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/alerts.md is the runbook of every alert the chart renders, and {@code
 * prometheusRule.runbookUrl} points each alert at its own section.
 */
class AlertsRunbookTest {
  private static final VigilChart CHART = VigilChart.locate();

  @Test
  void everyAlertHasARunbookSectionAndLinksToIt() throws IOException {
    String runbook = Files.readString(CHART.repoRoot().resolve("docs/alerts.md"));
    List<Map<String, Object>> alerts =
        alerts("{enabled: true, runbookUrl: 'https://docs.example.com/alerts.md'}");
    assertThat(alerts).hasSize(8).hasSameSizeAs(MonitoringQueries.alerts());
    for (Map<String, Object> alert : alerts) {
      String name = (String) alert.get("alert");
      assertThat(runbook).as("a section for %s", name).contains("\n## " + name + "\n");
      assertThat(runbook).as("%s in the table", name).contains("| `" + name + "` |");
      assertThat(annotations(alert))
          .containsEntry(
              "runbook_url", "https://docs.example.com/alerts.md#" + name.toLowerCase(Locale.ROOT));
    }
  }

  @Test
  void linksNoRunbookByDefault() {
    assertThat(alerts("{enabled: true}"))
        .hasSize(8)
        .allSatisfy(a -> assertThat(annotations(a)).containsKeys("summary", "description"))
        .allSatisfy(a -> assertThat(annotations(a)).doesNotContainKey("runbook_url"));
  }

  private static List<Map<String, Object>> alerts(String prometheusRule) {
    GenericKubernetesResource rule =
        CHART.render("prometheusRule: " + prometheusRule).ofKind("PrometheusRule").stream()
            .map(GenericKubernetesResource.class::cast)
            .findFirst()
            .orElseThrow(() -> new AssertionError("no PrometheusRule"));
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> alerts =
        groups.stream()
            .flatMap(g -> ((List<Map<String, Object>>) g.get("rules")).stream())
            .toList();
    return alerts;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> annotations(Map<String, Object> alert) {
    return (Map<String, String>) alert.get("annotations");
  }
}
