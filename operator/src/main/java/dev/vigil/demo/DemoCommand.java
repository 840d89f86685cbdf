package dev.vigil.demo;

import ch.qos.logback.classic.Level;
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
  /** The width of plain output (files, pipes, {@code --plain}). */
  static final int PLAIN_WIDTH = 80;

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
    return new DemoRun(options, out, terminal).run();
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

  /** A speed as given: {@code 10}, {@code 0.50}. */
  static String speed(double s) {
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
