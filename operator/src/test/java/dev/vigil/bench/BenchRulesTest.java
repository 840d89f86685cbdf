package dev.vigil.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.vigil.ops.MeteredProber;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rules the benchmarks judge by (issue 34, "Benchmarks that overstate"), run on fixtures built
 * from the figures of bench/*-results.md: the summarizers are python, run as the scripts run them.
 * No benchmark runs here.
 */
class BenchRulesTest {
  @TempDir Path dir;

  // --- probe-ramp.sh / stress_haproxy.py

  @Test
  void aRampStepIsSustainedOnlyAtNinetyFivePercentOfTheRateAsked() throws Exception {
    String out =
        python(
            "import stress_haproxy as s\n"
                + "print(s.sustained(24331, 50000, 0, 95), s.sustained(47600, 50000, 0, 95),"
                + " s.sustained(49900, 50000, 1, 95))",
            root().resolve("bench/harness"));
    // 24,331/s of 50,000/s asked (49 %) counted as sustained under the old default of 0
    assertThat(out.trim()).isEqualTo("False True False");
    assertThat(Files.readString(root().resolve("bench/probe-ramp.sh")))
        .contains("SUSTAIN_PCT=${SUSTAIN_PCT:-95}");
    assertThat(Files.readString(root().resolve("bench/harness/stress_haproxy.py")))
        .contains("\"--sustain-pct\", type=float, default=95");
  }

  @Test
  void theRampRatioIsABoundWhereAcheckerPassedEveryStep() throws Exception {
    String out =
        python(
            "import stress_haproxy as s\n"
                + "def t(v, vc, h, hc):\n"
                + "    return {'vigil': {'max_sustained_per_s': v, 'ramp_ceiling': vc},"
                + " 'haproxy': {'max_sustained_per_s': h, 'ramp_ceiling': hc}}\n"
                + "def p(r):\n"
                + "    print('%.2f %s' % r if r[0] is not None else 'none')\n"
                + "p(s.ratio(t(10000, False, 20000, False)))\n"
                + "p(s.ratio(t(24331, True, 18808, False)))\n"
                + "p(s.ratio(t(10000, False, 20000, True)))\n"
                + "p(s.ratio(t(24331, True, 18808, True)))\n",
            root().resolve("bench/harness"));
    assertThat(out.lines().toList()).containsExactly("0.50 ", "1.29 >=", "0.50 <=", "none");
  }

  // --- targets-summary.py

  @Test
  void theHeapRowComparesNoHeapWithAnRss() throws Exception {
    String row = row(targets(false), "heap per backend");
    assertThat(row).contains("528 B [528, 530, 527]");
    // no HAProxy figure (its RSS is not a heap) and no ratio; RSS against RSS is its own row
    assertThat(cells(row).get(3)).isEqualTo("- [-, -, -]");
    assertThat(cells(row).get(4)).isEqualTo("-");
    assertThat(cells(row(targets(false), "RSS per backend")).get(4)).endsWith("]");
  }

  @Test
  void missedProbesAreMetOnVigilsOwnCountWhateverHaproxyMissed() throws Exception {
    String table = targets(false);
    // Vigil 63 [63, 22, 65], HAProxy 1153: the old rule said "report both (HAProxy missed too)"
    assertThat(cells(row(table, "missed probes at 10000 backends")).get(5)).isEqualTo("no");
    // as gaps, Vigil 0 in every run: met
    assertThat(cells(row(table, "as gaps")).get(5)).isEqualTo("yes");
  }

  @Test
  void hangDetectionIsComparedUnrounded() throws Exception {
    String table = targets(false);
    // 1,000 backends: median 3.649 s, which rounded to 3.6 s passed under the old rule
    assertThat(cells(row(table, "hang detection median, s, 1000")).get(5)).isEqualTo("no");
    assertThat(cells(row(table, "hang detection median, s, 5000")).get(5)).isEqualTo("yes");
  }

  @Test
  void theRateRatioLeavesOutRunsWhereAcheckerOnlyReachedTheRampsTop() throws Exception {
    // the 2026-12-05 table: Vigil passed every step in all 3 runs (24,331/s of 50,000/s asked),
    // under the old rule (sustain_pct 0): it printed 1.30x, met
    String old = targets(false);
    String rate = row(old, "maximum sustained probe rate");
    assertThat(cells(rate).get(4)).startsWith("- (no run with both maxima measured)");
    assertThat(cells(rate).get(5)).isEqualTo("-");
    assertThat(old).contains("measured under the old rule, sustain_pct 0");
    assertThat(old).contains("Vigil passed every step of the ramp in 3 run(s)");

    // both maxima measured under the 95 % rule: the median of the runs' ratios
    String honest = targets(true);
    String r = row(honest, "maximum sustained probe rate");
    assertThat(r).contains(">= 95 % of the rate asked");
    assertThat(cells(r).get(4)).isEqualTo("0.50x [0.50, 0.50, 0.50]");
    assertThat(cells(r).get(5)).isEqualTo("no");
    assertThat(honest).doesNotContain("old rule");
  }

  @Test
  void theTableRecordsEachRunsOrder() throws Exception {
    assertThat(targets(true))
        .contains(
            "order per run, first checker: run 1 haproxy; ramp haproxy,vigil, run 2 vigil; ramp"
                + " vigil,haproxy, run 3 haproxy; ramp haproxy,vigil");
    assertThat(Files.readString(root().resolve("bench/probe-targets.sh")))
        .contains("if [ $((run % 2)) = 1 ]; then first=haproxy checkers=haproxy,vigil;");
  }

  @Test
  void probeLoadRunsTheMirrorOrderWhenHaproxyGoesFirst() throws Exception {
    String script = Files.readString(root().resolve("bench/probe-load.sh"));
    java.util.regex.Matcher fn =
        java.util.regex.Pattern.compile("(?ms)^legs\\(\\) \\{.*?^\\}$").matcher(script);
    assertThat(fn.find()).as("probe-load.sh defines legs()").isTrue();
    assertThat(legs(fn.group(), "vigil")).isEqualTo("vigil-false vigil-true haproxy");
    assertThat(legs(fn.group(), "haproxy")).isEqualTo("haproxy vigil-true vigil-false");
    assertThat(script).contains("for LEG in $ORDER; do").contains("\"$OUT/order-$N.txt\"");
  }

  private static String legs(String function, String first) throws Exception {
    Process p =
        new ProcessBuilder(
                "bash",
                "-c",
                function + "\nFIRST=" + first + " HAPROXY=1 REUSES='false true'; legs")
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return out.trim();
  }

  // --- shard-load.sh

  @Test
  void aCapacityAboveTheReplicaCountIsFlaggedAsNoise() throws Exception {
    assertThat(ShardLoadBench.capacityNoise(3.47, 3)).contains("NOISE");
    assertThat(ShardLoadBench.capacityNoise(2.9, 3)).isEmpty();
    assertThat(ShardLoadBench.capacityNoise(3.0, 3)).isEmpty();

    // shard-load-results.md: 3.47x [3.45, 3.47, 3.56] for 3 replicas
    Path old = shardRuns(3.45, 3.47, 3.56);
    String out = python(file("bench/shard-summary.py"), old.toString());
    assertThat(out).contains("NOISE: capacity_ratio above 3 replicas in 3 of 3 runs");
    assertThat(out).contains("the old rule, to be re-measured");
    assertThat(python(file("bench/shard-summary.py"), shardRuns(2.8, 2.9, 3.1).toString()))
        .contains("in 1 of 3 runs [3.1]");
  }

  @Test
  void replicasSettleByTheSameJitRuleReadFromTheirPids() throws Exception {
    long self = ProcessHandle.current().pid();
    // this JVM has compiled JUnit's and AssertJ's paths: its compiler threads used CPU
    assertThat(JitSettle.compilerCpuSeconds(self)).isPositive();
    // a process without compiler threads is quiet once the rule's 5 s look-back has passed
    Process idle = new ProcessBuilder("sleep", "60").start();
    try {
      double waited = JitSettle.awaitProcesses(List.of(idle.pid()), 40);
      assertThat(waited).isBetween(4.0, 40.0);
    } finally {
      idle.destroyForcibly();
    }
  }

  // --- OperatorLoadBench and load-summary.py

  @Test
  void operatorCpuIsPerCompletedProbeFromTheOperatorsOwnCounter() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    List<ProbeResult> results =
        new ArrayList<>(
            List.of(
                ProbeResult.pass("ok", 1),
                ProbeResult.fail(Reason.TIMEOUT, "timeout", 1000),
                ProbeResult.pass("ok", 2)));
    MeteredProber prober =
        new MeteredProber((t, s) -> Future.succeededFuture(results.remove(0)), registry);
    for (int i = 0; i < 3; i++) {
      prober.probe(new ProbeTarget("127.0.0.1", 8080), CheckSpec.builder().build());
    }
    assertThat(OperatorLoadBench.completedProbes(registry)).isEqualTo(3.0);
    assertThat(OperatorLoadBench.cpuPer1000Probes(0.3, 3)).isCloseTo(100.0, within(1e-9));
    assertThat(OperatorLoadBench.cpuPer1000Probes(0.3, 0)).isNaN();
  }

  @Test
  void theOperatorOverProbeOnlyRatioNeedsOneDenominator() throws Exception {
    Path probeOnly = jsonl("probe-only.jsonl", "{\"cpu_s_per_1000_probes\": 0.239}");
    String opLine =
        "{\"pools\": 1000, \"per_pool\": 10, \"kills\": 100, \"interval_ms\": 10000,"
            + " \"api_qps\": 200, \"api_burst\": 400, \"cpu_s_per_1000_probes\": 0.238%s}";
    Path old = jsonl("old.jsonl", String.format(opLine, ""));
    String out = python(file("bench/load-summary.py"), old.toString(), probeOnly.toString());
    assertThat(out).contains("none: the operator runs divided by the rate asked");
    assertThat(out).doesNotContain("1.00x");
    Path now = jsonl("now.jsonl", String.format(opLine, ", \"probes_completed\": 59000"));
    assertThat(python(file("bench/load-summary.py"), now.toString(), probeOnly.toString()))
        .contains("1.00x (both per completed probe)");
  }

  // --- fixtures

  /**
   * Three probe-targets.sh runs with the figures of probe-load-results.md's 2026-12-05 table (the
   * 1,000-backend hang median moved to 3.649 s). {@code honest}: ramps under the 95 % rule where
   * neither checker passed every step, and each run's order recorded; else the old ramps.
   */
  private String targets(boolean honest) throws Exception {
    Path out = dir.resolve(honest ? "targets-honest" : "targets-old");
    double[] heap = {528, 530, 527};
    int[] vMissed = {63, 22, 65};
    int[] hMissed = {843, 1246, 1153};
    double[] hang1000 = {3.47, 3.649, 3.70};
    double[] hang5000 = {3.54, 3.54, 3.76};
    double[] vRate = {22854, 24331, 24646};
    double[] hRate = {19003, 18694, 18808};
    boolean[] hCeiling = {true, false, true};
    for (int run = 1; run <= 3; run++) {
      int i = run - 1;
      Path load = Files.createDirectories(out.resolve("run-" + run + "/load"));
      Path ramp = Files.createDirectories(out.resolve("run-" + run + "/ramp"));
      for (int n : new int[] {1000, 5000}) {
        double hang = n == 1000 ? hang1000[i] : hang5000[i];
        write(load, "ext-vigil-false-" + n + ".json", checker(0.1, n * 4L, hang, 0, 0));
        write(load, "ext-vigil-true-" + n + ".json", checker(0.07, n * 4L, hang, 0, 0));
        write(load, "haproxy-" + n + ".json", checker(0.105, n * 7L, 5.6, 0, 0));
      }
      write(load, "vigil-false-5000.json", "{\"heap_per_backend_b\": " + heap[i] + "}");
      write(load, "ext-vigil-false-10000.json", checker(0.1, 40000, 0, vMissed[i], 0));
      write(load, "haproxy-10000.json", checker(0.1, 70000, 0, hMissed[i], 0));
      String order = run % 2 == 1 ? "haproxy" : "vigil";
      if (honest) {
        write(out.resolve("run-" + run), "order.txt", order + "\n");
        write(ramp, "ramp.json", ramp(95, order, 10000, false, 20000, false));
      } else {
        write(ramp, "ramp.json", ramp(0, null, vRate[i], true, hRate[i], hCeiling[i]));
      }
    }
    return python(file("bench/targets-summary.py"), out.toString());
  }

  private static String checker(double cpu, long rssKb, double hang, int missed, int late) {
    String window =
        String.format(
            "{\"cpu_s_per_1000_probes\": %s, \"rss_kb\": %d, \"missed_probes\": %d,"
                + " \"late_probes\": %d, \"expected_probes\": 100000, \"checker_cpu_s\": 1.0,"
                + " \"probes\": 10000}",
            cpu, rssKb, missed, late);
    return String.format(
        "{\"steady\": [%s, %s], \"all_up_after_s\": 1.0%s}",
        window,
        window,
        hang > 0
            ? ", \"transitions\": {\"hang\": {\"detect_s\": {\"median\": " + hang + "}}}"
            : "");
  }

  private static String ramp(
      double pct, String first, double vigil, boolean vigilTop, double haproxy, boolean haTop) {
    String order =
        first == null
            ? ""
            : "\"order\": "
                + (first.equals("haproxy")
                    ? "[\"haproxy\", \"vigil\"]"
                    : "[\"vigil\", \"haproxy\"]")
                + ", ";
    return String.format(
        "{\"sustain_pct\": %s, %s\"max\": {\"vigil\": {\"max_sustained_per_s\": %s, \"ramp_ceiling\":"
            + " %s}, \"haproxy\": {\"max_sustained_per_s\": %s, \"ramp_ceiling\": %s}}}",
        pct, order, vigil, vigilTop ? "true" : "false", haproxy, haTop ? "true" : "false");
  }

  private Path shardRuns(double... capacities) throws Exception {
    StringBuilder lines = new StringBuilder();
    for (double c : capacities) {
      lines.append(
          String.format(
              "{\"replicas\": 3, \"pools_per_replica\": 100, \"per_pool\": 10, \"interval_ms\":"
                  + " 10000, \"steady_s\": 30, \"capacity_ratio\": %s}%n",
              c));
    }
    return jsonl("shard-" + capacities[0] + ".jsonl", lines.toString());
  }

  private Path jsonl(String name, String text) throws Exception {
    return write(dir, name, text + "\n");
  }

  private static Path write(Path d, String name, String text) throws Exception {
    return Files.writeString(d.resolve(name), text);
  }

  /** The table's row whose first cell contains {@code label}. */
  private static String row(String table, String label) {
    return table
        .lines()
        .filter(l -> l.startsWith("| ") && cells(l).get(0).contains(label))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no row '" + label + "' in\n" + table));
  }

  private static List<String> cells(String row) {
    List<String> out = new ArrayList<>();
    for (String c : row.substring(1, row.length() - 1).split("\\|", -1)) {
      out.add(c.trim());
    }
    return out;
  }

  private static String file(String path) {
    return root().resolve(path).toString();
  }

  /** Runs {@code python3 script args...} (or {@code -c code} in {@code cwd}); returns stdout. */
  private static String python(String scriptOrCode, Object... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("python3"));
    Path cwd = root();
    if (args.length == 1 && args[0] instanceof Path p) {
      cmd.addAll(List.of("-c", scriptOrCode));
      cwd = p;
    } else {
      cmd.add(scriptOrCode);
      for (Object a : args) {
        cmd.add(a.toString());
      }
    }
    Process p = new ProcessBuilder(cmd).directory(cwd.toFile()).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(cmd + "\n" + out + err).isZero();
    return out;
  }

  private static Path root() {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.isRegularFile(root.resolve("operator/pom.xml"))) {
      root = root.getParent();
    }
    return root;
  }
}
