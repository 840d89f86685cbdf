package dev.vigil.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.deploy.PromQl.LabelUse;
import dev.vigil.deploy.PromQl.Matcher;
import dev.vigil.deploy.PromQl.References;
import dev.vigil.deploy.PromQl.Selector;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The PromQL Vigil ships: the chart's alerts (rendered with {@code prometheusRule.enabled}) and the
 * Grafana dashboard's queries, legends and variables; and the check that every metric and label
 * they use exists in a scrape of the operator.
 */
public final class MonitoringQueries {
  /** The dashboard, inside the chart so that its ConfigMap can carry it. */
  public static final String DASHBOARD = "deploy/helm/vigil/dashboards/vigil-dashboard.json";

  /**
   * Labels Prometheus adds to every scraped series of the chart's ServiceMonitor (the target's),
   * which a scrape of the operator does not show. {@code namespace} is not among them on purpose:
   * the ServiceMonitor honours the scraped labels, so on a pool metric it is the pool's, and a
   * query that groups an operator-wide metric by it would silently get the operator's namespace.
   */
  static final Set<String> TARGET_LABELS =
      Set.of("job", "instance", "pod", "service", "endpoint", "container");

  /** Grafana's interval variables, replaced before parsing. */
  private static final Map<String, String> INTERVALS =
      Map.of("$__rate_interval", "2m", "$__interval", "30s", "$__range", "1h");

  private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_]\\w*)\\s*}}");
  private static final Pattern ANNOTATION_LABEL = Pattern.compile("\\$labels\\.([a-zA-Z_]\\w*)");
  private static final Pattern LABEL_VALUES =
      Pattern.compile("label_values\\((.*),\\s*([a-zA-Z_]\\w*)\\)");

  /**
   * One query: where it is, its PromQL, and the labels its output names (a panel's legend, an
   * alert's {@code $labels.x} in annotations, a variable's label).
   */
  public record Query(String where, String expr, Set<String> outputLabels) {}

  private MonitoringQueries() {}

  /** The chart's alerts, rendered with default values and the PrometheusRule turned on. */
  public static List<Query> alerts() {
    VigilChart chart = VigilChart.locate();
    RenderedChart rendered = chart.render("prometheusRule: {enabled: true}");
    GenericKubernetesResource rule =
        rendered.all(GenericKubernetesResource.class).stream()
            .filter(r -> "PrometheusRule".equals(r.getKind()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no PrometheusRule rendered"));
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    List<Query> queries = new ArrayList<>();
    for (Map<String, Object> group : groups) {
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> rules = (List<Map<String, Object>>) group.get("rules");
      for (Map<String, Object> r : rules) {
        String name = (String) (r.containsKey("alert") ? r.get("alert") : r.get("record"));
        Set<String> output = new LinkedHashSet<>();
        Object annotations = r.get("annotations");
        if (annotations instanceof Map<?, ?> map) {
          for (Object text : map.values()) {
            found(ANNOTATION_LABEL, String.valueOf(text), output);
          }
        }
        queries.add(new Query("alert " + name, (String) r.get("expr"), output));
      }
    }
    return queries;
  }

  /** The dashboard's panel queries (with their legends) and its label_values variables. */
  public static List<Query> dashboard() {
    Path file = VigilChart.locate().repoRoot().resolve(DASHBOARD);
    JsonNode dashboard;
    try {
      dashboard = new ObjectMapper().readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Query> queries = new ArrayList<>();
    panels(dashboard.path("panels"), queries);
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      JsonNode query = variable.path("query");
      String text = query.isObject() ? query.path("query").asText() : query.asText();
      java.util.regex.Matcher m = LABEL_VALUES.matcher(text);
      if (m.matches()) {
        queries.add(
            new Query(
                "dashboard variable " + variable.path("name").asText(),
                m.group(1),
                Set.of(m.group(2))));
      }
    }
    return queries;
  }

  private static void panels(JsonNode panels, List<Query> queries) {
    for (JsonNode panel : panels) {
      for (JsonNode target : panel.path("targets")) {
        Set<String> output = new LinkedHashSet<>();
        found(LEGEND_LABEL, target.path("legendFormat").asText(""), output);
        String expr = target.path("expr").asText();
        for (Map.Entry<String, String> interval : INTERVALS.entrySet()) {
          expr = expr.replace(interval.getKey(), interval.getValue());
        }
        queries.add(
            new Query(
                "panel \"" + panel.path("title").asText() + "\" " + target.path("refId").asText(),
                expr,
                output));
      }
      panels(panel.path("panels"), queries);
    }
  }

  private static void found(Pattern pattern, String text, Set<String> into) {
    java.util.regex.Matcher m = pattern.matcher(text);
    while (m.find()) {
      into.add(m.group(1));
    }
  }

  /**
   * What in {@code queries} the scrape does not back: a metric no series has, a matcher's label
   * (or, for {@code =}, its value) no series of that metric has, a label a clause or the output
   * names that no series in its scope has. Prometheus' {@code up} and the target labels are taken
   * as given. Empty when everything exists.
   */
  public static List<String> problems(List<Query> queries, Scrape scrape) {
    List<String> problems = new ArrayList<>();
    for (Query query : queries) {
      References refs;
      try {
        refs = PromQl.parse(query.expr());
      } catch (IllegalArgumentException e) {
        problems.add(query.where() + ": " + e.getMessage());
        continue;
      }
      for (Selector s : refs.selectors()) {
        if (s.metric().equals("up")) {
          continue; // written by Prometheus for each target, not scraped
        }
        if (!scrape.has(s.metric())) {
          problems.add(query.where() + ": no metric " + s.metric());
          continue;
        }
        for (Matcher m : s.matchers()) {
          if (TARGET_LABELS.contains(m.label())) {
            continue;
          }
          if (!scrape.hasLabel(s.metric(), m.label())) {
            problems.add(query.where() + ": " + s.metric() + " has no label " + m.label());
          } else if (m.op().equals("=")
              && !m.value().isEmpty()
              && !scrape.hasValue(s.metric(), m.label(), m.value())) {
            problems.add(
                query.where() + ": no " + s.metric() + "{" + m.label() + "=\"" + m.value() + "\"}");
          }
        }
      }
      for (LabelUse use : refs.labels()) {
        if (!inScope(use.label(), use.scope(), scrape)) {
          problems.add(
              query.where()
                  + ": "
                  + use.clause()
                  + " ("
                  + use.label()
                  + ") on series without it: "
                  + names(use.scope()));
        }
      }
      for (String label : query.outputLabels()) {
        if (!inScope(label, refs.selectors(), scrape)) {
          problems.add(
              query.where()
                  + ": shows label "
                  + label
                  + " that "
                  + names(refs.selectors())
                  + " lack");
        }
      }
    }
    return problems.stream().distinct().toList();
  }

  private static boolean inScope(String label, List<Selector> scope, Scrape scrape) {
    if (TARGET_LABELS.contains(label)) {
      return true;
    }
    return scope.stream()
        .anyMatch(
            s ->
                scrape.hasLabel(s.metric(), label)
                    || (s.metric().equals("up") && label.equals("namespace")));
  }

  private static List<String> names(List<Selector> selectors) {
    return selectors.stream().map(Selector::metric).distinct().toList();
  }
}
