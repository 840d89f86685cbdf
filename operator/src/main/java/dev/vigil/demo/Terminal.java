package dev.vigil.demo;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the live view may draw on: the terminal's size, and whether its locale takes UTF-8 (under
 * {@code LC_ALL=C} a {@code ·} prints as {@code ?}, so the view falls back to ASCII).
 *
 * @param width columns
 * @param height rows
 * @param unicode the locale's character set is UTF-8
 */
public record Terminal(int width, int height, boolean unicode) {
  /** The size the view is laid out for when the terminal does not say. */
  public static final Terminal STANDARD = new Terminal(80, 24, false);

  /** Never narrower or shorter than this, whatever the terminal says. */
  static final int MIN_WIDTH = 40;

  static final int MIN_HEIGHT = 12;

  public Terminal {
    width = Math.max(MIN_WIDTH, width);
    height = Math.max(MIN_HEIGHT, height);
  }

  /** The separator between header fields. */
  public String dot() {
    return unicode ? " · " : " | ";
  }

  /** The controlling terminal's size ({@code stty size}), else COLUMNS/LINES, else 80x24. */
  public static Terminal detect(Map<String, String> env) {
    int[] size = sttySize();
    int width = size != null ? size[1] : number(env.get("COLUMNS"), 80);
    int height = size != null ? size[0] : number(env.get("LINES"), 24);
    return new Terminal(width, height, utf8(env));
  }

  /** POSIX locale precedence: LC_ALL, then LC_CTYPE, then LANG; none set is the C locale. */
  public static boolean utf8(Map<String, String> env) {
    for (String name : new String[] {"LC_ALL", "LC_CTYPE", "LANG"}) {
      String v = env.get(name);
      if (v != null && !v.isEmpty()) {
        String lower = v.toLowerCase(Locale.ROOT);
        return lower.contains("utf-8") || lower.contains("utf8");
      }
    }
    return false;
  }

  private static int number(String v, int fallback) {
    try {
      return v == null ? fallback : Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  /** Rows and columns, or null when there is no terminal to ask. */
  private static int[] sttySize() {
    File tty = new File("/dev/tty");
    if (!tty.exists()) {
      return null;
    }
    try {
      Process p =
          new ProcessBuilder("stty", "size")
              .redirectInput(tty)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!p.waitFor(1, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return null;
      }
      String[] parts =
          new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)
              .trim()
              .split(" ");
      if (p.exitValue() != 0 || parts.length != 2) {
        return null;
      }
      return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
    } catch (Exception e) {
      return null;
    }
  }
}
