package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.demo.Timeline.Row;
import dev.vigil.deploy.MonitoringQueries;
import dev.vigil.deploy.MonitoringQueries.Query;
import dev.vigil.deploy.Scrape;
import dev.vigil.shard.CheckerGauges;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo's tour, fast and small, with the same expectations the demo prints: if a rule or the
 * demo rots, this fails with the first unmet expectation. The expectations live in production code
 * ({@code Scenarios}), so the critical ones are pinned here as well, from the example's settings
 * and a slack of this test's own: loosening the demo's bounds does not loosen this test.
 *
 * <p>The tour runs every rule (down, flap, passive outcomes, panic, the ejection cap, damping), so
 * the operator's {@code /metrics} at its end has every series a cluster would: the chart's alerts
 * and the Grafana dashboard are checked against that scrape as well.
 */
class DemoTourIT {
  /** Publishing and observing, on a loaded machine: the demo's own slack when this was written. */
  private static final long PINNED_SLACK_MS = 2_000;

  private static final int SPEED = 2;

  private static DemoCommand.Result result;
  private static String printed;

  @BeforeAll
  static void runTheTour() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    DemoOptions options = new DemoOptions(4, "tour", 240_000, SPEED, false, false);
    result = DemoCommand.run(options, out);
    printed = buffer.toString(StandardCharsets.UTF_8);
  }

  @Test
  void theTourHoldsEveryExpectationItPrints() {
    assertThat(result.unmet()).as(printed).isNull();
    assertThat(result.exitCode()).isZero();
    assertThat(printed)
        .contains("PASSED: every expectation of scenario tour held")
        .contains("NAME  POLICY  AVAILABLE  TOTAL  EJECTED  PANIC  AGE")
        .contains("EndpointSlice ready set")
        .contains("Events");
    List<String> steps = result.rows().stream().map(Row::step).distinct().toList();
    assertThat(steps)
        .containsExactly("start", "down", "flap", "passive", "panic", "cap", "damping");
    assertThat(result.rows()).allMatch(Row::held);

    // The web example at speed 2: interval 2 s scaled to 500 ms, rise 2, fall 3.
    DemoExamples ex = DemoExamples.load(SPEED);
    assertThat(ex.intervalMs()).isEqualTo(500);
    assertThat(ex.rise()).isEqualTo(2);
    assertThat(ex.fall()).isEqualTo(3);
    assertThat(measured(result, "down", "dies"))
        .as("a dead backend leaves after fall probes")
        .isBetween(lower(ex, ex.fall()), upper(ex, ex.fall()));
    assertThat(measured(result, "down", "heals"))
        .as("a healed backend returns after rise probes")
        .isBetween(lower(ex, ex.rise()), upper(ex, ex.rise()));
  }

  /**
   * Every metric, matcher label (and value, for {@code =}) and grouping, matching and legend or
   * annotation label that the chart's alerts and the dashboard use exists in the scrape, and that
   * check finds what is missing.
   */
  @Test
  void theAlertsAndTheDashboardUseOnlyMetricsAndLabelsTheOperatorExports() {
    assertThat(result.metrics()).as(printed).contains("vigil_pool_available");
    Scrape scrape = Scrape.parse(result.metrics() + "\n" + shardedReplicaGauges());
    List<Query> alerts = MonitoringQueries.alerts();
    List<Query> dashboard = MonitoringQueries.dashboard();
    assertThat(alerts).hasSizeGreaterThanOrEqualTo(6);
    assertThat(dashboard).hasSizeGreaterThan(30);

    assertThat(MonitoringQueries.problems(alerts, scrape)).isEmpty();
    assertThat(MonitoringQueries.problems(dashboard, scrape)).isEmpty();

    // The same check on queries that are wrong in each way it looks for.
    List<Query> wrong =
        List.of(
            new Query("misspelt metric", "sum(vigil_pool_availble)", Set.of()),
            new Query("no such label", "vigil_pool_panic{pol=\"web\"}", Set.of()),
            new Query("no such value", "vigil_backends{state=\"sleeping\"}", Set.of()),
            new Query(
                "grouped by a label of another metric",
                "sum by (reason) (vigil_pool_available)",
                Set.of()),
            new Query(
                "operator metric by namespace",
                "sum by (namespace) (rate(vigil_probes_total[5m]))",
                Set.of()),
            new Query("legend label missing", "vigil_pool_panic", Set.of("backend")));
    assertThat(MonitoringQueries.problems(wrong, scrape))
        .hasSize(wrong.size())
        .anySatisfy(p -> assertThat(p).contains("no metric vigil_pool_availble"))
        .anySatisfy(p -> assertThat(p).contains("has no label pol"))
        .anySatisfy(p -> assertThat(p).contains("state=\"sleeping\""))
        .anySatisfy(p -> assertThat(p).contains("sum by (reason)"))
        .anySatisfy(p -> assertThat(p).contains("sum by (namespace)"))
        .anySatisfy(p -> assertThat(p).contains("shows label backend"));
  }

  /**
   * The demo runs one unsharded replica; a sharded one (the chart's default) exports its checker
   * gauges too (docs/design.md §8), which {@code VigilCheckerSuspect} reads: scraped here as {@link
   * CheckerGauges} registers them.
   */
  private static String shardedReplicaGauges() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    CheckerGauges.register(registry, "vigil-0", () -> 0.0, () -> false);
    return registry.scrape();
  }

  /** Plain output is read in a terminal later: no line past 80 columns, however long its text. */
  @Test
  void everyPlainLineFitsEightyColumns() {
    assertThat(printed.lines().filter(l -> l.length() > 80).toList()).as(printed).isEmpty();
  }

  /** Starting the cluster takes seconds on a busy machine: the first step says so first. */
  @Test
  void theFirstStepIsAnnouncedBeforeTheClusterStarts() {
    List<String> lines = printed.lines().toList();
    int starting = indexOf(lines, "starting an embedded API server");
    int up = indexOf(lines, "embedded API server up");
    assertThat(starting).as(printed).isNotNegative().isLessThan(up).isLessThan(10);
  }

  /**
   * The recipe for a reporter of one's own (docs/reporters.md, "Against the demo"): a URL the docs'
   * {@code $VIGIL_URL/v1/...} completes, a CA file, and every variable the docs' shell reporter
   * reads, each on a line to paste; the proxy's own target printed whole.
   */
  @Test
  void theReporterRecipeExportsEveryValueTheDocsReporterReads() throws java.io.IOException {
    assertThat(printed)
        .containsPattern(
            "(?m)^ +https://127\\.0\\.0\\.1:\\d+/v1/namespaces/shop/backendpools/web/outcomes$")
        .containsPattern("(?m)^ +export VIGIL_URL=https://127\\.0\\.0\\.1:\\d+$")
        .containsPattern("(?m)^ +export VIGIL_CA=/\\S+$")
        .containsPattern("(?m)^ +export VIGIL_TOKEN=demo\\.[0-9a-f]+$")
        .containsPattern("(?m)^ +export NAMESPACE=shop POOL=web BACKEND=127\\.0\\.0\\.10:\\d+$");
    java.nio.file.Path docs = java.nio.file.Path.of("../docs/reporters.md");
    if (!java.nio.file.Files.exists(docs)) {
      docs = java.nio.file.Path.of("docs/reporters.md");
    }
    String guide = java.nio.file.Files.readString(docs);
    String shell =
        guide.substring(guide.indexOf("```sh"), guide.indexOf("```", guide.indexOf("```sh") + 5));
    java.util.regex.Matcher used = java.util.regex.Pattern.compile("\\$([A-Z_]+)").matcher(shell);
    Set<String> variables = new java.util.TreeSet<>();
    while (used.find()) {
      variables.add(used.group(1));
    }
    assertThat(variables).contains("VIGIL_URL", "VIGIL_CA", "VIGIL_TOKEN");
    for (String v : variables) {
      assertThat(printed).as(v).containsPattern("(?m)^ +export (.* )?" + v + "=\\S");
    }
    assertThat(guide).contains("the " + words(variables.size()) + " values");
  }

  private static String words(int n) {
    return List.of("zero", "one", "two", "three", "four", "five", "six", "seven").get(n);
  }

  private static int indexOf(List<String> lines, String text) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(text)) {
        return i;
      }
    }
    return -1;
  }

  private static long measured(DemoCommand.Result result, String step, String whatContains) {
    return result.rows().stream()
        .filter(r -> r.step().equals(step) && r.what().contains(whatContains))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no row " + step + " / " + whatContains))
        .measuredMs();
  }

  /** {@code probes - 1} intervals, all jittered short: the earliest a rule may act. */
  private static long lower(DemoExamples ex, int probes) {
    return Math.round((probes - 1) * ex.intervalMs() * (1 - ex.jitterPercent() / 100.0));
  }

  /** {@code probes} intervals jittered long, one timeout, and this test's slack. */
  private static long upper(DemoExamples ex, int probes) {
    return Math.round(probes * ex.intervalMs() * (1 + ex.jitterPercent() / 100.0))
        + ex.timeoutMs()
        + ex.intervalMs()
        + PINNED_SLACK_MS;
  }
}
