package dev.vigil.demo;

import dev.vigil.demo.DemoCommand.Result;
import dev.vigil.demo.Expectations.Unmet;
import dev.vigil.demo.Timeline.Row;
import java.io.PrintStream;
import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * One run of {@code vigil demo}, step by step: start the cluster, start the operator against it,
 * start the demo's traffic and its reporters, play the scenario, print the final state and the
 * summary. {@link DemoCommand} picks the output; this class does the run.
 */
final class DemoRun {
  /** How long the final print waits for status, slices and runtime to agree. */
  private static final long FINAL_SETTLE_MS = 5_000;

  private final DemoOptions options;
  private final PrintStream out;
  private final Terminal terminal;
  private final long startNanos = System.nanoTime();
  private final long startWall = System.currentTimeMillis();
  private final DemoExamples examples;
  private final Timeline timeline;

  /** What the scenario ended with: the first unmet expectation (or null) and the metrics. */
  private record Played(String unmet, String metrics) {}

  DemoRun(DemoOptions options, PrintStream out, Terminal terminal) {
    this.options = options;
    this.out = out;
    this.terminal = terminal;
    this.examples = DemoExamples.load(options.speed());
    this.timeline =
        new Timeline(
            () -> (System.nanoTime() - startNanos) / 1_000_000, options.live() ? null : out);
  }

  Result run() {
    out.println(intro());
    out.flush();
    timeline.log(
        "starting an embedded API server and "
            + options.backends()
            + " backends (seconds; longer on a busy machine)");
    DemoCluster cluster;
    try {
      cluster = DemoCluster.create(examples, options.backends());
    } catch (Exception e) {
      out.println("FAILED: could not start the demo: " + e.getMessage());
      return new Result(1, List.of(), "could not start the demo: " + e.getMessage(), "");
    }
    timeline.log(
        "embedded API server up with Vigil's CRDs; "
            + cluster.size()
            + " backends listening; example applied");
    try {
      return runOperatorOn(cluster);
    } finally {
      out.flush();
    }
  }

  /** Starts the operator and the observer on {@code cluster}, plays, reports; closes both. */
  private Result runOperatorOn(DemoCluster cluster) {
    LiveView view = new LiveView(cluster, options.color(), startWall, terminal);
    PlainPrinter plain = options.live() ? null : new PlainPrinter(out, cluster, startWall);
    HealthyTimeouts machine = new HealthyTimeouts(cluster::keepsHealthy);
    try (cluster;
        DemoObserver observer =
            new DemoObserver(
                cluster,
                startNanos,
                o -> {
                  machine.observe(o);
                  if (plain != null) {
                    plain.changed(o);
                  }
                })) {
      cluster.startOperator();
      observer.start();
      timeline.log(
          "operator started against the embedded API server; "
              + cluster.size()
              + " Pods at 127.0.x.y:"
              + cluster.port()
              + " (containerPort "
              + "of the example moved there: loopback addresses share one unprivileged port)");
      URI intake = URI.create("https://127.0.0.1:" + cluster.operator().outcomePort());
      try (DemoTraffic traffic = traffic(cluster, observer, intake)) {
        logReporters(cluster, traffic, intake);
        Scenarios scenarios = scenarios(cluster, traffic, intake, observer);
        Played played = play(cluster, scenarios, view, observer);
        return report(view, observer, machine, played);
      }
    }
  }

  /** The demo's proxy: requests to the ready backends, their outcomes reported to the intake. */
  private DemoTraffic traffic(DemoCluster cluster, DemoObserver observer, URI intake) {
    OutcomeReporter reporter =
        new HttpOutcomeReporter(intake, cluster.auth()::token, cluster.caPem());
    long tick = Math.max(25, examples.intervalMs() / 4);
    return new DemoTraffic(
        () -> observer.latest().ready(),
        cluster.port(),
        "/cart",
        cluster.namespace(),
        cluster.poolName(),
        reporter,
        tick,
        Math.max(examples.timeoutMs(), 200));
  }

  private void logReporters(DemoCluster cluster, DemoTraffic traffic, URI intake) {
    timeline.log(
        "outcome reporter: the demo's proxy, authenticated as "
            + cluster.auth().user()
            + " (TokenReview, SubjectAccessReview answered by the embedded API server),"
            + " POSTs over TLS to",
        List.of(traffic.target().toString()));
    // For a reporter of one's own (docs/reporters.md): the same intake, CA and token.
    timeline.log(
        "your own reporter (docs/reporters.md): in another terminal, paste",
        DemoCommand.ownReporter(cluster, intake));
  }

  private Scenarios scenarios(
      DemoCluster cluster, DemoTraffic traffic, URI intake, DemoObserver observer) {
    long limit =
        options.durationMs() > 0
            ? options.durationMs()
            : Math.round(60_000 + 400_000 / options.speed() + 100L * options.backends());
    return new Scenarios(
        cluster,
        traffic,
        new HttpOutcomeReporter(intake, () -> "forged." + cluster.auth().token(), cluster.caPem()),
        timeline,
        new Expectations(observer, limit));
  }

  /** Plays the scenario under the live view (if live) while a recorder scrapes the metrics. */
  private Played play(
      DemoCluster cluster, Scenarios scenarios, LiveView view, DemoObserver observer) {
    Screen screen =
        options.live()
            ? new Screen(
                    out,
                    () ->
                        view.render(observer.latest(), header(scenarios, observer), timeline.log()))
                .start()
            : null;
    String unmet = null;
    // A Prometheus' view of the run: the series of one scrape a second.
    try (SeriesRecorder recorder = new SeriesRecorder(cluster::scrapeMetrics).start(1_000)) {
      try {
        scenarios.run(options.scenario());
      } catch (Unmet e) {
        unmet = e.getMessage();
        timeline.row(
            new Row(scenarios.step(), "UNMET: " + e.getMessage(), timeline.now(), -1, "-", false));
      } finally {
        if (screen != null) {
          screen.stop();
        }
      }
      return new Played(unmet, recorder.series());
    }
  }

  /** Prints the final state, the scenario (if live) and the summary; the run's result. */
  private Result report(
      LiveView view, DemoObserver observer, HealthyTimeouts machine, Played played) {
    out.println();
    // status is coalesced (about a second), the slices are not: let them agree first
    out.println(view.renderAll(settled(observer), "Final state"));
    if (options.live()) {
      out.println("Scenario");
      timeline.log().forEach(out::println);
      out.println();
    }
    String speed = DemoCommand.speed(options.speed());
    out.println("Summary (" + options.scenario() + ", speed " + speed + ")");
    out.print(timeline.summary(terminal.width()));
    out.println();
    if (played.unmet() != null) {
      out.println("FAILED: " + played.unmet());
      String advice = machine.advice(options.speed(), examples.timeoutMs());
      if (advice != null) {
        out.println(advice);
      }
      return new Result(1, timeline.rows(), played.unmet(), played.metrics());
    }
    out.println("PASSED: every expectation of scenario " + options.scenario() + " held");
    return new Result(0, timeline.rows(), null, played.metrics());
  }

  private static Observation settled(DemoObserver observer) {
    try {
      return observer.settle(FINAL_SETTLE_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return observer.latest();
    }
  }

  private String intro() {
    long[] orig = examples.original();
    String speed = DemoCommand.speed(options.speed());
    return String.format(
        Locale.ROOT,
        "Vigil demo: scenario %s, %d backends, speed %s%n"
            + "Applying %s%n"
            + "  (HealthPolicy web, BackendPool web in namespace shop),%n"
            + "  durations scaled x%s for --speed %s:%n"
            + "  interval %s -> %s, timeout %s -> %s,%n"
            + "  baseEjectionTime %s -> %s; rise %d, fall %d, consecutiveErrors %d,%n"
            + "  maxEjectionPercent %d%%, panicThreshold %d%%%n",
        options.scenario(),
        options.backends(),
        speed,
        examples.source(),
        DemoCommand.speed(examples.scale()),
        speed,
        Timeline.millis(orig[0]),
        Timeline.millis(examples.intervalMs()),
        Timeline.millis(orig[1]),
        Timeline.millis(examples.timeoutMs()),
        Timeline.millis(orig[2]),
        Timeline.millis(examples.baseEjectionMs()),
        examples.rise(),
        examples.fall(),
        examples.consecutiveErrors(),
        examples.maxEjectionPercent(),
        examples.panicThresholdPercent());
  }

  private String header(Scenarios scenarios, DemoObserver observer) {
    String dot = terminal.dot();
    return "Vigil demo"
        + dot
        + "scenario "
        + options.scenario()
        + dot
        + "step "
        + scenarios.step()
        + dot
        + Timeline.seconds(observer.elapsedMs()).strip()
        + dot
        + "speed "
        + DemoCommand.speed(options.speed());
  }
}
