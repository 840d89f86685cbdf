package dev.vigil.passive;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go's {@code time.Duration} text ({@code 1.5ms}, {@code 2m3s}, {@code 150µs}) in nanoseconds. */
final class GoDuration {
  private static final Pattern PART =
      Pattern.compile("([0-9]+(?:\\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)");

  private GoDuration() {}

  /** The duration in nanoseconds, or -1 when {@code s} is not Go duration text. */
  static long nanos(String s) {
    if (s.isEmpty() || s.length() > 64) {
      return -1;
    }
    Matcher m = PART.matcher(s);
    int at = 0;
    double total = 0;
    while (at < s.length() && m.find(at) && m.start() == at) {
      double n = Double.parseDouble(m.group(1));
      total +=
          n
              * switch (m.group(2)) {
                case "ns" -> 1;
                case "us", "µs", "μs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3600e9;
              };
      at = m.end();
    }
    return at == s.length() ? (long) total : -1;
  }
}
