package dev.vigil.probe.http;

import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Reason;

/**
 * Classifies a raw HTTP status line exactly as {@link HttpProber} does; pure, no I/O, so tools
 * (such as a replay of recorded answers) reach the same verdict as the prober.
 *
 * <p>The line must be {@code HTTP/d.d SP ddd}, optionally followed by {@code SP reason-phrase}. The
 * verdict comes from the three-digit code alone; the reason phrase means nothing ({@code HTTP/1.1
 * 503 Backend 200 ms slow} is a 503). Anything else (a four-digit code, a code below 100, no
 * version, garbage) is a {@link Reason#MALFORMED_RESPONSE}. A trailing CR is ignored.
 */
public final class StatusLineClassifier {

  private final ExpectedStatuses expected;
  private final ExpectedStatuses failFast;

  public StatusLineClassifier(ExpectedStatuses expected) {
    this(expected, ExpectedStatuses.NONE);
  }

  /**
   * @param failFast statuses that fail at once (docs/design.md §2.2 {@code failFastStatuses});
   *     disjoint from {@code expected}
   */
  public StatusLineClassifier(ExpectedStatuses expected, ExpectedStatuses failFast) {
    this.expected = expected;
    this.failFast = failFast;
  }

  /**
   * The status code of a well-formed status line, or -1 when it is malformed.
   *
   * @param line the first line of the response, without the line feed
   */
  public static int parseCode(CharSequence line) {
    int n = line.length();
    if (n > 0 && line.charAt(n - 1) == '\r') {
      n--;
    }
    if (n < 12
        || line.charAt(0) != 'H'
        || line.charAt(1) != 'T'
        || line.charAt(2) != 'T'
        || line.charAt(3) != 'P'
        || line.charAt(4) != '/'
        || !digit(line.charAt(5))
        || line.charAt(6) != '.'
        || !digit(line.charAt(7))
        || line.charAt(8) != ' '
        || !digit(line.charAt(9))
        || !digit(line.charAt(10))
        || !digit(line.charAt(11))) {
      return -1;
    }
    if (n > 12 && line.charAt(12) != ' ') {
      return -1; // a fourth digit, or a code glued to something else
    }
    int code =
        (line.charAt(9) - '0') * 100 + (line.charAt(10) - '0') * 10 + (line.charAt(11) - '0');
    return code < 100 ? -1 : code;
  }

  /** The verdict for a status line, with the latency to report. */
  public ProbeResult classify(CharSequence statusLine, long latencyMs) {
    int code = parseCode(statusLine);
    if (code < 0) {
      return ProbeResult.fail(
          Reason.MALFORMED_RESPONSE, "malformed status line: " + excerpt(statusLine), latencyMs);
    }
    return verdict(expected, failFast, code, latencyMs);
  }

  /** The verdict for a well-formed status code: pass, fail-fast, or an ordinary status failure. */
  static ProbeResult verdict(
      ExpectedStatuses expected, ExpectedStatuses failFast, int code, long latencyMs) {
    if (expected.contains(code)) {
      return ProbeResult.httpStatus(true, code, latencyMs);
    }
    return failFast.contains(code)
        ? ProbeResult.failFastStatus(code, latencyMs)
        : ProbeResult.httpStatus(false, code, latencyMs);
  }

  /** The verdict for a status line, with latency 0 (for tools that replay recorded lines). */
  public ProbeResult classify(CharSequence statusLine) {
    return classify(statusLine, 0);
  }

  private static boolean digit(char c) {
    return c >= '0' && c <= '9';
  }

  /** At most 40 printable characters of the line, for the detail text. */
  static String excerpt(CharSequence line) {
    StringBuilder out = new StringBuilder(Math.min(line.length(), 43) + 2).append('"');
    for (int i = 0; i < line.length() && i < 40; i++) {
      char c = line.charAt(i);
      out.append(c >= 0x20 && c < 0x7f ? c : '?');
    }
    return out.append(line.length() > 40 ? "...\"" : "\"").toString();
  }
}
