package dev.vigil.replay;

import dev.vigil.flags.FlagParser;
import dev.vigil.flags.FlagParser.Kind;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.HealthSettingsBuilder;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.http.StatusLineClassifier;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.ObjIntConsumer;
import java.util.function.ObjLongConsumer;

/**
 * {@code vigil replay}: reads the replay line protocol on standard input and answers on standard
 * output, so anyone can feed a sequence of probe answers and request outcomes and see what Vigil
 * would decide. Flags set the decision settings, with docs/design.md §1 defaults.
 */
public final class ReplayCommand {
  /** One flag: how it takes its value and how it changes the settings builder. */
  private record Flag(String help, Kind kind, Setter set) {}

  /** Sets one flag's value on the builder; the name is for the error of a bad value. */
  @FunctionalInterface
  private interface Setter {
    void set(HealthSettingsBuilder settings, String name, String value);
  }

  private static final Map<String, Flag> FLAGS = flags();

  private ReplayCommand() {}

  /** Runs a session over {@code in}; returns the exit code (2 on a bad flag). */
  public static int run(List<String> args, BufferedReader in, PrintStream out, PrintStream err)
      throws IOException {
    ReplaySession session;
    try {
      session = session(args);
    } catch (IllegalArgumentException e) {
      // The error alone, last on the screen: the usage is 30 lines, and would scroll it away.
      err.println("vigil replay: " + e.getMessage());
      err.println("run 'vigil replay --help' for the flags and commands");
      return 2;
    }
    for (String line; (line = in.readLine()) != null; ) {
      for (String answer : session.handle(line)) {
        out.println(answer);
      }
      out.flush();
    }
    return 0;
  }

  /** A session with the settings the flags give. */
  public static ReplaySession session(List<String> args) {
    Map<String, String> given = PARSER.parse(args);
    HealthSettingsBuilder settings = HealthSettings.builder();
    DampingFlags damping = new DampingFlags();
    given.forEach(
        (name, value) -> {
          if (FLAGS.containsKey(name)) {
            setting(settings, name, value);
          } else if (DAMPING_FLAGS.containsKey(name)) {
            damping.set(name, value);
          }
        });
    ExpectedStatuses expected = statuses(given, "expected-statuses", ExpectedStatuses.DEFAULT);
    ExpectedStatuses failFast = statuses(given, "fail-fast-statuses", ExpectedStatuses.NONE);
    try {
      settings.damping(damping.build());
      int shared = failFast.firstShared(expected);
      if (shared >= 0) {
        throw new IllegalArgumentException(
            "--fail-fast-statuses: " + shared + " is also in --expected-statuses");
      }
      return new ReplaySession(settings.build(), new StatusLineClassifier(expected, failFast));
    } catch (InvalidSettingsException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** Applies one of {@link #FLAGS}; a value that is no number is refused naming the flag. */
  private static void setting(HealthSettingsBuilder settings, String name, String value) {
    try {
      FLAGS.get(name).set().set(settings, name, value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be a number, got " + value);
    }
  }

  /** The statuses {@code --name} gives, or {@code otherwise}. */
  private static ExpectedStatuses statuses(
      Map<String, String> given, String name, ExpectedStatuses otherwise) {
    String value = given.get(name);
    return value == null ? otherwise : ExpectedStatuses.parse("--" + name, value);
  }

  /**
   * docs/design.md §2.1's replay flags; damping is on when {@code --damping-half-life-ms} is given.
   */
  private static final Map<String, String> DAMPING_FLAGS = dampingFlags();

  private static final FlagParser PARSER = parser();

  private static Map<String, String> dampingFlags() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("damping-penalty", "merit added per Up<->Down transition (1000)");
    f.put("damping-suppress", "damped when the merit is above this after a penalty (3000)");
    f.put("damping-reuse", "released when the decayed merit is at or below this (750)");
    f.put("damping-half-life-ms", "merit half-life; giving it turns damping on (off)");
    f.put("damping-max-suppress-ms", "no suppression outlasts this after the last flap (300000)");
    return f;
  }

  /** The damping flags seen so far; defaults from docs/design.md §1. */
  private static final class DampingFlags {
    private final DampingSettings defaults = DampingSettings.defaults();
    private int penalty = defaults.penalty();
    private int suppress = defaults.suppressThreshold();
    private int reuse = defaults.reuseThreshold();
    private Long halfLifeMs;
    private long maxSuppressMs = defaults.maxSuppressTimeMs();

    void set(String name, String value) {
      try {
        switch (name) {
          case "damping-penalty" -> penalty = Integer.parseInt(value);
          case "damping-suppress" -> suppress = Integer.parseInt(value);
          case "damping-reuse" -> reuse = Integer.parseInt(value);
          case "damping-half-life-ms" -> halfLifeMs = Long.parseLong(value);
          default -> maxSuppressMs = Long.parseLong(value);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + name + " must be a number, got " + value);
      }
    }

    DampingSettings build() {
      return halfLifeMs == null
          ? null
          : new DampingSettings(penalty, suppress, reuse, halfLifeMs, maxSuppressMs);
    }
  }

  /**
   * Every flag and how it takes its value. An unknown flag's error names only it: the run points to
   * {@code --help}, as a list of twenty-odd flags would push the error off a small screen.
   */
  private static FlagParser parser() {
    Map<String, Kind> kinds = new LinkedHashMap<>();
    FLAGS.forEach((name, flag) -> kinds.put(name, flag.kind()));
    kinds.put("expected-statuses", Kind.VALUE);
    kinds.put("fail-fast-statuses", Kind.VALUE);
    DAMPING_FLAGS.keySet().forEach(name -> kinds.put(name, Kind.VALUE));
    return FlagParser.namingOnlyTheUnknownFlag(kinds);
  }

  /** A number flag: its value is parsed as an int. */
  private static Flag count(String help, ObjIntConsumer<HealthSettingsBuilder> set) {
    return new Flag(help, Kind.VALUE, (b, name, v) -> set.accept(b, Integer.parseInt(v)));
  }

  /** A duration flag in milliseconds. */
  private static Flag millis(String help, ObjLongConsumer<HealthSettingsBuilder> set) {
    return new Flag(help, Kind.VALUE, (b, name, v) -> set.accept(b, Long.parseLong(v)));
  }

  /** A switch: alone it means true, else {@code true} or {@code false}. */
  private static Flag onOff(String help, BiConsumer<HealthSettingsBuilder, Boolean> set) {
    return new Flag(help, Kind.SWITCH, (b, name, v) -> set.accept(b, FlagParser.bool(name, v)));
  }

  /** The decision settings' flags, in the order of the usage. */
  private static Map<String, Flag> flags() {
    Map<String, Flag> f = new LinkedHashMap<>();
    hysteresisAndErrorRunFlags(f);
    ejectionFlags(f);
    windowAndPanicFlags(f);
    return f;
  }

  /** Active rise and fall; the passive error runs. */
  private static void hysteresisAndErrorRunFlags(Map<String, Flag> f) {
    f.put(
        "rise",
        count("passes in a row that bring a Down backend Up (2)", HealthSettingsBuilder::rise));
    f.put(
        "fall",
        count("fails in a row that take an Up backend Down (3)", HealthSettingsBuilder::fall));
    f.put(
        "consecutive-errors",
        count(
            "failed requests in a row that eject; 0 = off (5)",
            HealthSettingsBuilder::consecutiveErrors));
    f.put(
        "consecutive-local-origin-errors",
        count(
            "the same for local-origin errors (5)",
            HealthSettingsBuilder::consecutiveLocalOriginErrors));
    f.put(
        "split-local-origin",
        onOff("count local-origin errors apart (true)", HealthSettingsBuilder::splitLocalOrigin));
  }

  /** How long an ejection lasts, how many at once, and dry runs. */
  private static void ejectionFlags(Map<String, Flag> f) {
    f.put(
        "base-ejection-ms",
        millis(
            "an ejection lasts this x ejections (30000)",
            HealthSettingsBuilder::baseEjectionTimeMs));
    f.put(
        "max-ejection-ms",
        millis("cap on one ejection (300000)", HealthSettingsBuilder::maxEjectionTimeMs));
    f.put(
        "max-ejection-percent",
        count(
            "refuse an ejection that puts more than this share out (10)",
            HealthSettingsBuilder::maxEjectionPercent));
    f.put(
        "always-eject-one",
        onOff(
            "allow one ejection whatever the percent (false)",
            HealthSettingsBuilder::alwaysEjectOne));
    f.put(
        "uneject-on-active-pass",
        onOff(
            "a passing probe ends an ejection (false)",
            HealthSettingsBuilder::unejectOnActivePass));
    f.put(
        "enforce",
        onOff(
            "false = dry run: OUTCOME answers WOULD_EJECT <until-ms> (true)",
            HealthSettingsBuilder::enforce));
  }

  /** Failures within a window; panic. */
  private static void windowAndPanicFlags(Map<String, Flag> f) {
    f.put(
        "window-failures",
        count(
            "failed requests within --failure-window-ms that eject; 0 = off (0)",
            HealthSettingsBuilder::windowFailures));
    f.put(
        "failure-window-ms",
        millis("the window of --window-failures (10000)", HealthSettingsBuilder::failureWindowMs));
    f.put(
        "panic-threshold-percent",
        count(
            "below this share available, publish all; 0 = off (50)",
            HealthSettingsBuilder::panicThresholdPercent));
    f.put(
        "panic-exit-percent",
        count(
            "leave panic at or above this share (= threshold)",
            HealthSettingsBuilder::panicExitPercent));
  }

  public static String usage() {
    StringBuilder sb =
        new StringBuilder(
            """
            usage: vigil replay [flags] < commands
              commands: POOL <b>... | PROBE <b> TIMEOUT|REFUSED|<status line>
                        STATUS | HEALTHY | AT <ms> | OUTCOME <b> OK|FAIL [local]
                        SWEEP | AVAILABLE | DAMPED
              flags:
            """);
    FLAGS.forEach((name, flag) -> flag(sb, name, flag.help()));
    flag(sb, "expected-statuses", "pass statuses, e.g. 200-399,404 (200-399)");
    flag(sb, "fail-fast-statuses", "statuses that take an Up backend Down at once (none)");
    DAMPING_FLAGS.forEach((name, help) -> flag(sb, name, help));
    return sb.toString().stripTrailing();
  }

  /** One flag of the usage: on one line when it fits 80 columns, else its help under it. */
  private static void flag(StringBuilder sb, String name, String help) {
    String line = "    --" + name + "  " + help;
    if (line.length() <= 80) {
      sb.append(line).append('\n');
    } else {
      sb.append("    --").append(name).append("\n        ").append(help).append('\n');
    }
  }
}
