package dev.vigil.demo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * What happened and when: the step log (printed as it happens in plain mode, shown in the live view
 * otherwise) and the summary rows with measured and configured times.
 */
public final class Timeline {
  /**
   * One result of the scenario.
   *
   * @param atMs elapsed time when it was observed
   * @param measuredMs the measured time, or -1 when the row is not a duration
   * @param configured what the policy says, in words
   * @param held whether the expectation held
   */
  public record Row(
      String step, String what, long atMs, long measuredMs, String configured, boolean held) {}

  private final LongSupplier elapsedMs;
  private final PrintStream plainOut;
  private final List<String> log = new ArrayList<>();
  private final List<Row> rows = new ArrayList<>();

  /**
   * @param plainOut where log lines go as they happen, or null when a live view shows them
   */
  public Timeline(LongSupplier elapsedMs, PrintStream plainOut) {
    this.elapsedMs = elapsedMs;
    this.plainOut = plainOut;
  }

  public long now() {
    return elapsedMs.getAsLong();
  }

  /** Logs a line stamped with the elapsed time. */
  public synchronized void log(String text) {
    String line = seconds(now()) + "  " + text;
    log.add(line);
    if (plainOut != null) {
      plainOut.println(line);
      plainOut.flush();
    }
  }

  /**
   * Logs a line stamped with the elapsed time and lines under it, indented to its text (commands to
   * copy, one a line).
   */
  public synchronized void log(String text, List<String> more) {
    log(text);
    String indent = " ".repeat(seconds(0).length() + 2);
    for (String m : more) {
      String line = indent + m;
      log.add(line);
      if (plainOut != null) {
        plainOut.println(line);
        plainOut.flush();
      }
    }
  }

  public synchronized void row(Row row) {
    rows.add(row);
  }

  public synchronized List<String> log() {
    return List.copyOf(log);
  }

  public synchronized List<Row> rows() {
    return List.copyOf(rows);
  }

  /** The summary table. */
  public synchronized String summary() {
    List<String[]> cells = new ArrayList<>();
    cells.add(new String[] {"STEP", "WHAT HAPPENED", "AT", "MEASURED", "CONFIGURED", "RESULT"});
    for (Row r : rows) {
      cells.add(
          new String[] {
            r.step(),
            r.what(),
            seconds(r.atMs()).strip(),
            r.measuredMs() < 0 ? "-" : millis(r.measuredMs()),
            r.configured(),
            r.held() ? "ok" : "UNMET"
          });
    }
    return Table.render(cells);
  }

  /**
   * The summary for a terminal {@code width} columns wide: the table when it fits, else each row on
   * two lines (step, result, times and what happened; then what was configured).
   */
  public synchronized String summary(int width) {
    String table = summary();
    if (table.lines().allMatch(l -> l.length() <= width)) {
      return table;
    }
    StringBuilder sb = new StringBuilder();
    for (Row r : rows) {
      sb.append(
              String.format(
                  Locale.ROOT,
                  "%-8s %-5s at %s, measured %s: %s%n",
                  r.step(),
                  r.held() ? "ok" : "UNMET",
                  seconds(r.atMs()).strip(),
                  r.measuredMs() < 0 ? "-" : millis(r.measuredMs()),
                  r.what()))
          .append("         configured: ")
          .append(r.configured())
          .append('\n');
    }
    return sb.toString();
  }

  /** {@code 12.3s}, right-aligned to 7 characters. */
  public static String seconds(long ms) {
    return String.format(Locale.ROOT, "%6.1fs", ms / 1000.0);
  }

  /** {@code 850ms} or {@code 3.21s}. */
  public static String millis(long ms) {
    return ms < 1000 ? ms + "ms" : String.format(Locale.ROOT, "%.2fs", ms / 1000.0);
  }
}
