package dev.vigil.replay;

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

/**
 * {@code vigil replay}: reads the replay line protocol on standard input and answers on standard
 * output, so anyone can feed a sequence of probe answers and request outcomes and see what Vigil
 * would decide. Flags set the decision settings, with docs/design.md §1 defaults.
 */
public final class ReplayCommand {
  /** One flag: how it changes the settings builder. */
  private record Flag(String help, BiConsumer<HealthSettingsBuilder, String> apply) {}

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
    HealthSettingsBuilder settings = HealthSettings.builder();
    DampingFlags damping = new DampingFlags();
    ExpectedStatuses expected = ExpectedStatuses.DEFAULT;
    ExpectedStatuses failFast = ExpectedStatuses.NONE;
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
      if (!FLAGS.containsKey(name)
          && !name.equals("expected-statuses")
          && !name.equals("fail-fast-statuses")
          && !DAMPING_FLAGS.containsKey(name)) {
        throw new IllegalArgumentException("unknown flag --" + name);
      }
      boolean isBoolean = BOOLEAN_FLAGS.contains(name);
      if (value == null) {
        boolean hasNext = i + 1 < args.size() && !args.get(i + 1).startsWith("--");
        if (hasNext) {
          value = args.get(++i);
        } else if (isBoolean) {
          value = "true";
        } else {
          throw new IllegalArgumentException("--" + name + " needs a value");
        }
      }
      if (name.equals("expected-statuses")) {
        expected = ExpectedStatuses.parse("--expected-statuses", value);
        continue;
      }
      if (name.equals("fail-fast-statuses")) {
        failFast = ExpectedStatuses.parse("--fail-fast-statuses", value);
        continue;
      }
      if (DAMPING_FLAGS.containsKey(name)) {
        damping.set(name, value);
        continue;
      }
      Flag flag = FLAGS.get(name);
      if (flag == null) {
        throw new IllegalArgumentException("unknown flag --" + name);
      }
      try {
        flag.apply().accept(settings, value);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + name + " must be a number, got " + value);
      }
    }
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

  /**
   * docs/design.md §2.1's replay flags; damping is on when {@code --damping-half-life-ms} is given.
   */
  private static final Map<String, String> DAMPING_FLAGS =
      Map.of(
          "damping-penalty", "merit added per Up<->Down transition (1000)",
          "damping-suppress", "damped when the merit is above this after a penalty (3000)",
          "damping-reuse", "released when the decayed merit is at or below this (750)",
          "damping-half-life-ms", "merit half-life; giving it turns damping on (off)",
          "damping-max-suppress-ms", "no suppression outlasts this after the last flap (300000)");

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

  private static final List<String> BOOLEAN_FLAGS =
      List.of("split-local-origin", "always-eject-one", "uneject-on-active-pass", "enforce");

  private static boolean bool(String name, String v) {
    if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
      throw new IllegalArgumentException("--" + name + " must be true or false, got " + v);
    }
    return Boolean.parseBoolean(v);
  }

  private static Map<String, Flag> flags() {
    Map<String, Flag> f = new LinkedHashMap<>();
    f.put(
        "rise",
        new Flag(
            "passes in a row that bring a Down backend Up (2)",
            (b, v) -> b.rise(Integer.parseInt(v))));
    f.put(
        "fall",
        new Flag(
            "fails in a row that take an Up backend Down (3)",
            (b, v) -> b.fall(Integer.parseInt(v))));
    f.put(
        "consecutive-errors",
        new Flag(
            "failed requests in a row that eject; 0 = off (5)",
            (b, v) -> b.consecutiveErrors(Integer.parseInt(v))));
    f.put(
        "consecutive-local-origin-errors",
        new Flag(
            "the same for local-origin errors (5)",
            (b, v) -> b.consecutiveLocalOriginErrors(Integer.parseInt(v))));
    f.put(
        "split-local-origin",
        new Flag(
            "count local-origin errors apart (true)",
            (b, v) -> b.splitLocalOrigin(bool("split-local-origin", v))));
    f.put(
        "base-ejection-ms",
        new Flag(
            "an ejection lasts this x ejections (30000)",
            (b, v) -> b.baseEjectionTimeMs(Long.parseLong(v))));
    f.put(
        "max-ejection-ms",
        new Flag("cap on one ejection (300000)", (b, v) -> b.maxEjectionTimeMs(Long.parseLong(v))));
    f.put(
        "max-ejection-percent",
        new Flag(
            "refuse an ejection that puts more than this share out (10)",
            (b, v) -> b.maxEjectionPercent(Integer.parseInt(v))));
    f.put(
        "always-eject-one",
        new Flag(
            "allow one ejection whatever the percent (false)",
            (b, v) -> b.alwaysEjectOne(bool("always-eject-one", v))));
    f.put(
        "uneject-on-active-pass",
        new Flag(
            "a passing probe ends an ejection (false)",
            (b, v) -> b.unejectOnActivePass(bool("uneject-on-active-pass", v))));
    f.put(
        "enforce",
        new Flag(
            "false = dry run: OUTCOME answers WOULD_EJECT <until-ms> (true)",
            (b, v) -> b.enforce(bool("enforce", v))));
    f.put(
        "window-failures",
        new Flag(
            "failed requests within --failure-window-ms that eject; 0 = off (0)",
            (b, v) -> b.windowFailures(Integer.parseInt(v))));
    f.put(
        "failure-window-ms",
        new Flag(
            "the window of --window-failures (10000)",
            (b, v) -> b.failureWindowMs(Long.parseLong(v))));
    f.put(
        "panic-threshold-percent",
        new Flag(
            "below this share available, publish all; 0 = off (50)",
            (b, v) -> b.panicThresholdPercent(Integer.parseInt(v))));
    f.put(
        "panic-exit-percent",
        new Flag(
            "leave panic at or above this share (= threshold)",
            (b, v) -> b.panicExitPercent(Integer.parseInt(v))));
    return f;
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
    for (String name :
        List.of(
            "damping-penalty",
            "damping-suppress",
            "damping-reuse",
            "damping-half-life-ms",
            "damping-max-suppress-ms")) {
      flag(sb, name, DAMPING_FLAGS.get(name));
    }
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
