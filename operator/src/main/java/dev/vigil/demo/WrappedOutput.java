package dev.vigil.demo;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The demo's plain output, at most {@code width} columns a line: a longer line is broken at spaces,
 * and its continuation indented to the text after its time stamp ({@code " 12.3s "}) or to its own
 * indent plus two. A word longer than a line is cut. UTF-8 in, UTF-8 out; one character, one column
 * (the demo prints no wide characters).
 */
final class WrappedOutput extends OutputStream {
  private static final Pattern STAMP = Pattern.compile("^( *\\d+\\.\\ds  | *)");

  private final PrintStream target;
  private final int width;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  WrappedOutput(PrintStream target, int width) {
    this.target = target;
    this.width = width;
  }

  /** A PrintStream that writes through a {@code WrappedOutput} to {@code target}. */
  static PrintStream of(PrintStream target, int width) {
    return new PrintStream(new WrappedOutput(target, width), true, StandardCharsets.UTF_8);
  }

  @Override
  public synchronized void write(int b) {
    if (b == '\n') {
      for (String l : wrap(line.toString(StandardCharsets.UTF_8), width)) {
        target.println(l);
      }
      line.reset();
    } else {
      line.write(b);
    }
  }

  @Override
  public synchronized void flush() {
    target.flush();
  }

  @Override
  public synchronized void close() {
    if (line.size() > 0) {
      target.print(line.toString(StandardCharsets.UTF_8));
      line.reset();
    }
    target.flush();
  }

  /** {@code text} broken into lines of at most {@code width} columns. */
  static List<String> wrap(String text, int width) {
    List<String> out = new ArrayList<>();
    if (text.length() <= width) {
      out.add(text);
      return out;
    }
    Matcher m = STAMP.matcher(text);
    m.find();
    int stamp = m.end();
    String indent = " ".repeat(Math.min(width / 2, stamp == 0 ? 2 : Math.max(stamp, 2)));
    if (m.group(1).isBlank()) {
      indent = " ".repeat(Math.min(width / 2, stamp + 2));
    }
    StringBuilder current = new StringBuilder(text.substring(0, stamp));
    boolean empty = true;
    for (String word : text.substring(stamp).split(" ", -1)) {
      if (!empty && current.length() + 1 + word.length() > width) {
        out.add(current.toString());
        current = new StringBuilder(indent);
        empty = true;
      }
      if (!empty) {
        current.append(' ');
      }
      current.append(word);
      empty = false;
      while (current.length() > width) {
        out.add(current.substring(0, width));
        current = new StringBuilder(indent).append(current.substring(width));
      }
    }
    out.add(current.toString());
    return out;
  }
}
