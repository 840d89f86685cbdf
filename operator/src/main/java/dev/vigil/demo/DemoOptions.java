package dev.vigil.demo;

import java.util.List;
import java.util.Locale;

/**
 * The demo's flags.
 *
 * @param backends how many demo backends (and Pods), 3..1000
 * @param scenario {@code tour} or one rule's scenario
 * @param durationMs the whole run's time limit; 0 = a generous limit from the intervals
 * @param speed time scale: 1 runs the tour in about a minute, higher is faster
 * @param color ANSI colours and in-place refresh when the output is a terminal
 * @param live refresh the view in place (a terminal) instead of printing plain lines
 */
public record DemoOptions(
    int backends, String scenario, long durationMs, double speed, boolean color, boolean live) {

  public static final int MAX_BACKENDS = 1000;

  /** Parses {@code --name value} or {@code --name=value}; throws naming the bad flag. */
  public static DemoOptions parse(List<String> args, boolean terminal) {
    int backends = 6;
    String scenario = "tour";
    long durationMs = 0;
    double speed = 1;
    boolean color = terminal;
    boolean live = terminal;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument: " + a);
      }
      String name = a.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      if (name.equals("no-color")) {
        color = false;
        continue;
      }
      if (name.equals("plain")) {
        live = false;
        color = false;
        continue;
      }
      if (!List.of("backends", "scenario", "duration", "speed").contains(name)) {
        throw unknown(name);
      }
      if (value == null) {
        value = valueAfter(args, i++, name);
      }
      switch (name) {
        case "backends" -> backends = intFlag(name, value, 3, MAX_BACKENDS);
        case "scenario" -> scenario = scenario(value);
        case "duration" -> durationMs = duration(value);
        case "speed" -> speed = speed(value);
        default -> throw unknown(name);
      }
    }
    return new DemoOptions(backends, scenario, durationMs, speed, color, live);
  }

  /** The argument after the flag at {@code i}: its value. */
  private static String valueAfter(List<String> args, int i, String name) {
    if (i + 1 >= args.size()) {
      throw new IllegalArgumentException("--" + name + " needs a value");
    }
    return args.get(i + 1);
  }

  private static IllegalArgumentException unknown(String name) {
    return new IllegalArgumentException(
        "unknown flag --"
            + name
            + "; known: --backends, --scenario, --duration, --speed, --no-color, --plain");
  }

  /** The text of {@code vigil demo --help}. */
  public static String usage() {
    return """
        usage: vigil demo [flags]

        Vigil's whole job with no cluster: an embedded API server with Vigil's CRDs,
        real HTTP backends on loopback addresses (127.0.0.10 onwards), examples/web.yaml
        applied, the real operator, and a scripted scenario with a live view and a
        summary. Exits 0 when every expectation held, 1 when one did not, 2 on a bad
        flag.

          --scenario NAME   %s
                            (default tour)
          --backends N      3..%d backends (default 6)
          --speed X         0.1..100; scales the example's durations by 1/(2 x X)
                            (default 1)
          --duration D      time limit of the whole run, e.g. 90s or 3m
                            (default: from the intervals)
          --no-color        no ANSI colours
          --plain           plain lines instead of the live view
                            (the default when not a terminal)
          -h, --help        this text
        """
        .formatted(String.join(", ", Scenarios.NAMES), MAX_BACKENDS);
  }

  private static int intFlag(String name, String v, int min, int max) {
    try {
      int n = Integer.parseInt(v);
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "--" + name + " must be a number from " + min + " to " + max + ", got " + v);
  }

  private static String scenario(String v) {
    String s = v.toLowerCase(Locale.ROOT);
    if (!Scenarios.NAMES.contains(s)) {
      throw new IllegalArgumentException(
          "--scenario must be one of " + String.join(", ", Scenarios.NAMES) + ", got " + v);
    }
    return s;
  }

  private static long duration(String v) {
    try {
      return dev.vigil.reconcile.Durations.millis("--duration", v);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--duration must be a duration such as 90s or 2m, got " + v);
    }
  }

  private static double speed(String v) {
    try {
      double s = Double.parseDouble(v);
      if (s >= 0.1 && s <= 100) {
        return s;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("--speed must be a number from 0.1 to 100, got " + v);
  }
}
