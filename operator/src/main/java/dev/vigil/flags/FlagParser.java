package dev.vigil.flags;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one reader of {@code --name value}, {@code --name=value} and {@code --name} flags, shared by
 * {@code vigil operator}, {@code vigil demo} and {@code vigil replay} (issue 34: three hand-written
 * copies before). It knows which names exist and which take a value; what a value means stays with
 * each command, whose messages name the flag.
 *
 * <p>A value flag takes the argument after it unless that one is a flag too ({@code --speed
 * --plain} is refused: {@code --speed needs a value}); a switch alone means {@code true}, and takes
 * the argument after it as its value when that one is not a flag ({@code --enforce false}). This
 * package imports nothing of Vigil's, so every command can use it.
 */
public final class FlagParser {
  /** How a flag takes its value. */
  public enum Kind {
    /** Needs a value: {@code --backends 12} or {@code --backends=12}. */
    VALUE,
    /** {@code true} alone, or the value given: {@code --plain}, {@code --enforce=false}. */
    SWITCH
  }

  private final Map<String, Kind> flags;
  private final List<String> names;
  private final boolean listKnown;

  private FlagParser(Map<String, Kind> flags, boolean listKnown) {
    this.flags = Map.copyOf(flags);
    this.names = List.copyOf(flags.keySet());
    this.listKnown = listKnown;
  }

  /**
   * A parser whose error for an unknown flag lists the known ones, in the order of {@code flags}
   * (give a {@link LinkedHashMap} for a stable order).
   */
  public static FlagParser listingKnownFlags(Map<String, Kind> flags) {
    return new FlagParser(flags, true);
  }

  /**
   * A parser whose error for an unknown flag names only that flag: for a command with too many
   * flags for one line, whose caller points to its {@code --help} instead.
   */
  public static FlagParser namingOnlyTheUnknownFlag(Map<String, Kind> flags) {
    return new FlagParser(flags, false);
  }

  /**
   * The values given, by flag name, in the order first given; a flag given twice keeps its last
   * value.
   *
   * @throws IllegalArgumentException naming the flag: an argument that is no flag, an unknown flag,
   *     a value flag without its value
   */
  public Map<String, String> parse(List<String> args) {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (!arg.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument: " + arg);
      }
      String name = arg.substring(2);
      int eq = name.indexOf('=');
      if (eq >= 0) {
        values.put(known(name.substring(0, eq)), name.substring(eq + 1));
        continue;
      }
      boolean valueFollows = i + 1 < args.size() && !args.get(i + 1).startsWith("--");
      if (valueFollows) {
        values.put(known(name), args.get(++i));
      } else if (flags.get(known(name)) == Kind.SWITCH) {
        values.put(name, "true");
      } else {
        throw new IllegalArgumentException("--" + name + " needs a value");
      }
    }
    return values;
  }

  /** A switch's value: {@code true} or {@code false}, any case; else an error naming the flag. */
  public static boolean bool(String name, String value) {
    if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
      throw new IllegalArgumentException("--" + name + " must be true or false, got " + value);
    }
    return Boolean.parseBoolean(value);
  }

  private String known(String name) {
    if (flags.containsKey(name)) {
      return name;
    }
    throw new IllegalArgumentException(
        "unknown flag --" + name + (listKnown ? "; known: --" + String.join(", --", names) : ""));
  }
}
