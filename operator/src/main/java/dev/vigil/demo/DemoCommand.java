package dev.vigil.demo;

import ch.qos.logback.classic.Level;
import dev.vigil.demo.Expectations.Unmet;
import dev.vigil.demo.Timeline.Row;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * {@code vigil demo}: Vigil's whole job with no cluster. An embedded API server, real loopback
 * backends behind Pods, {@code examples/web.yaml} applied, the real operator started against it,
 * and a scripted scenario with a live view and a summary; exit 0 when every expectation held.
 */
public final class DemoCommand {
  /** How long the final print waits for status, slices and runtime to agree. */
  private static final long FINAL_SETTLE_MS = 5_000;

  /** The width of plain output (files, pipes, {@code --plain}). */
  static final int PLAIN_WIDTH = 80;

  private static Observation settled(DemoObserver observer) {
    try {
      return observer.settle(FINAL_SETTLE_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return observer.latest();
    }
  }

  private DemoCommand() {}

  /** Runs the demo; returns the exit code (0 all held, 1 an expectation unmet, 2 bad flags). */
  public static int run(List<String> args, PrintStream out, PrintStream err) {
    DemoOptions options;
    try {
      options = DemoOptions.parse(args, System.console() != null);
    } catch (IllegalArgumentException e) {
      err.println("vigil demo: " + e.getMessage());
      return 2;
    }
    return run(options, out).exitCode();
  }

  /**
   * What a run ended with.
   *
   * @param exitCode 0 every expectation held, 1 one did not
   * @param rows the summary rows
   * @param unmet the first unmet expectation, or null
   * @param metrics every series the operator's {@code /metrics} showed during the scenario (scraped
   *     over HTTP every second), each with its last value; empty if the demo did not get that far:
   *     what a Prometheus would have stored, to check the alerts and the dashboard against
   */
  public record Result(int exitCode, List<Row> rows, String unmet, String metrics) {}

  public static Result run(DemoOptions options, PrintStream out) {
    if (options.live()) {
      return run(options, out, Terminal.detect(System.getenv()));
    }
    // Plain output goes to a file or a pipe: lines of at most 80 columns (a terminal's default,
    // where such output is read later), tables laid out for that width, the locale respected.
    PrintStream plain = WrappedOutput.of(out, PLAIN_WIDTH);
    try {
      return run(
          options,
          plain,
          new Terminal(PLAIN_WIDTH, Integer.MAX_VALUE, Terminal.utf8(System.getenv())));
    } finally {
      plain.flush();
    }
  }

  /**
   * As {@link #run(DemoOptions, PrintStream)}, with the live view laid out for {@code terminal}.
   */
  public static Result run(DemoOptions options, PrintStream out, Terminal terminal) {
    quietLogs();
    long startNanos = System.nanoTime();
    long startWall = System.currentTimeMillis();
    DemoExamples examples = DemoExamples.load(options.speed());
    out.println(intro(options, examples));
    out.flush();
    Timeline timeline =
        new Timeline(
            () -> (System.nanoTime() - startNanos) / 1_000_000, options.live() ? null : out);
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
    LiveView view = new LiveView(cluster, options.color(), startWall, terminal);
    PlainPrinter plain = options.live() ? null : new PlainPrinter(out, cluster, startWall);
    long limit =
        options.durationMs() > 0
            ? options.durationMs()
            : Math.round(60_000 + 400_000 / options.speed() + 100L * options.backends());
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
      java.net.URI intake =
          java.net.URI.create("https://127.0.0.1:" + cluster.operator().outcomePort());
      OutcomeReporter reporter =
          new HttpOutcomeReporter(intake, cluster.auth()::token, cluster.caPem());
      long tick = Math.max(25, examples.intervalMs() / 4);
      try (DemoTraffic traffic =
          new DemoTraffic(
              () -> observer.latest().ready(),
              cluster.port(),
              "/cart",
              cluster.namespace(),
              cluster.poolName(),
              reporter,
              tick,
              Math.max(examples.timeoutMs(), 200))) {
        timeline.log(
            "outcome reporter: the demo's proxy, authenticated as "
                + cluster.auth().user()
                + " (TokenReview, SubjectAccessReview answered by the embedded API server),"
                + " POSTs over TLS to",
            List.of(traffic.target().toString()));
        // For a reporter of one's own (docs/reporters.md): the same intake, CA and token.
        timeline.log(
            "your own reporter (docs/reporters.md): in another terminal, paste",
            ownReporter(cluster, intake));
        Scenarios scenarios =
            new Scenarios(
                cluster,
                traffic,
                new HttpOutcomeReporter(
                    intake, () -> "forged." + cluster.auth().token(), cluster.caPem()),
                timeline,
                new Expectations(observer, limit));
        Screen screen =
            options.live()
                ? new Screen(
                        out,
                        () ->
                            view.render(
                                observer.latest(),
                                header(options, scenarios, observer, terminal.dot()),
                                timeline.log()))
                    .start()
                : null;
        String unmet = null;
        String metrics;
        // A Prometheus' view of the run: the series of one scrape a second.
        try (SeriesRecorder recorder = new SeriesRecorder(cluster::scrapeMetrics).start(1_000)) {
          try {
            scenarios.run(options.scenario());
          } catch (Unmet e) {
            unmet = e.getMessage();
            timeline.row(
                new Row(
                    scenarios.step(), "UNMET: " + e.getMessage(), timeline.now(), -1, "-", false));
          } finally {
            if (screen != null) {
              screen.stop();
            }
          }
          metrics = recorder.series();
        }
        out.println();
        // status is coalesced (about a second), the slices are not: let them agree first
        out.println(view.renderAll(settled(observer), "Final state"));
        if (options.live()) {
          out.println("Scenario");
          timeline.log().forEach(out::println);
          out.println();
        }
        out.println("Summary (" + options.scenario() + ", speed " + speed(options.speed()) + ")");
        out.print(timeline.summary(terminal.width()));
        out.println();
        if (unmet != null) {
          out.println("FAILED: " + unmet);
          String advice = machine.advice(options.speed(), examples.timeoutMs());
          if (advice != null) {
            out.println(advice);
          }
          return new Result(1, timeline.rows(), unmet, metrics);
        }
        out.println("PASSED: every expectation of scenario " + options.scenario() + " held");
        return new Result(0, timeline.rows(), null, metrics);
      }
    } finally {
      out.flush();
    }
  }

  /** The shell lines that point a reporter of one's own at the demo's intake. */
  static List<String> ownReporter(DemoCluster cluster, java.net.URI intake) {
    return List.of(
        "export VIGIL_URL=" + intake,
        "export VIGIL_CA=" + cluster.caFile(),
        "export VIGIL_TOKEN=" + cluster.auth().token(),
        "export NAMESPACE="
            + cluster.namespace()
            + " POOL="
            + cluster.poolName()
            + " BACKEND="
            + DemoCluster.address(0)
            + ":"
            + cluster.port());
  }

  private static String intro(DemoOptions o, DemoExamples ex) {
    long[] orig = ex.original();
    return String.format(
        Locale.ROOT,
        "Vigil demo: scenario %s, %d backends, speed %s%n"
            + "Applying %s%n"
            + "  (HealthPolicy web, BackendPool web in namespace shop),%n"
            + "  durations scaled x%s for --speed %s:%n"
            + "  interval %s -> %s, timeout %s -> %s,%n"
            + "  baseEjectionTime %s -> %s; rise %d, fall %d, consecutiveErrors %d,%n"
            + "  maxEjectionPercent %d%%, panicThreshold %d%%%n",
        o.scenario(),
        o.backends(),
        speed(o.speed()),
        ex.source(),
        speed(ex.scale()),
        speed(o.speed()),
        Timeline.millis(orig[0]),
        Timeline.millis(ex.intervalMs()),
        Timeline.millis(orig[1]),
        Timeline.millis(ex.timeoutMs()),
        Timeline.millis(orig[2]),
        Timeline.millis(ex.baseEjectionMs()),
        ex.rise(),
        ex.fall(),
        ex.consecutiveErrors(),
        ex.maxEjectionPercent(),
        ex.panicThresholdPercent());
  }

  private static String header(DemoOptions o, Scenarios s, DemoObserver observer, String dot) {
    return "Vigil demo"
        + dot
        + "scenario "
        + o.scenario()
        + dot
        + "step "
        + s.step()
        + dot
        + Timeline.seconds(observer.elapsedMs()).strip()
        + dot
        + "speed "
        + speed(o.speed());
  }

  private static String speed(double s) {
    return s == Math.rint(s) ? Long.toString((long) s) : String.format(Locale.ROOT, "%.2f", s);
  }

  /** Kept: java.util.logging holds its loggers weakly, and a collected one forgets its level. */
  private static final java.util.logging.Logger MOCK_SERVER_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  /** The operator logs to stdout; the demo's own view is the output, so only errors get through. */
  private static void quietLogs() {
    MOCK_SERVER_LOG.setLevel(java.util.logging.Level.WARNING);
    if (LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)
        instanceof ch.qos.logback.classic.Logger root) {
      root.setLevel(Level.ERROR);
      if (LoggerFactory.getLogger("io.javaoperatorsdk")
          instanceof ch.qos.logback.classic.Logger j) {
        j.setLevel(Level.ERROR);
      }
      for (String name : List.of("io.fabric8", "io.netty", "io.vertx", "dev.vigil")) {
        if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger l) {
          l.setLevel(Level.ERROR);
        }
      }
    }
  }
}
