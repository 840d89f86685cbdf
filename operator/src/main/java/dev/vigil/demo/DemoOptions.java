package dev.vigil.demo;

import dev.vigil.flags.FlagParser;
import dev.vigil.flags.FlagParser.Kind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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

  private static final FlagParser PARSER = FlagParser.listingKnownFlags(flags());

  /** The flags in the order the unknown-flag error lists them. */
  private static Map<String, Kind> flags() {
    Map<String, Kind> flags = new LinkedHashMap<>();
    List.of("backends", "scenario", "duration", "speed").forEach(f -> flags.put(f, Kind.VALUE));
    List.of("no-color", "plain").forEach(f -> flags.put(f, Kind.SWITCH));
    return flags;
  }

  /**
   * Parses {@code --name value} or {@code --name=value} (the switches {@code --no-color} and {@code
   * --plain} alone); throws naming the bad flag.
   */
  public static DemoOptions parse(List<String> args, boolean terminal) {
    Map<String, String> given = PARSER.parse(args);
    boolean plain = switchOn(given, "plain");
    String backends = given.get("backends");
    String scenario = given.get("scenario");
    String duration = given.get("duration");
    String speed = given.get("speed");
    return new DemoOptions(
        backends == null ? 6 : intFlag("backends", backends, 3, MAX_BACKENDS),
        scenario == null ? "tour" : scenario(scenario),
        duration == null ? 0 : duration(duration),
        speed == null ? 1 : speed(speed),
        terminal && !plain && !switchOn(given, "no-color"),
        terminal && !plain);
  }

  private static boolean switchOn(Map<String, String> given, String name) {
    return given.containsKey(name) && FlagParser.bool(name, given.get(name));
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
