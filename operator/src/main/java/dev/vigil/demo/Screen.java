package dev.vigil.demo;

import java.io.PrintStream;
import java.util.function.Supplier;

/**
 * Redraws a text screen in place on a terminal a few times a second, on the alternate screen
 * buffer: each frame moves the cursor home and overwrites line by line, erasing what is left of
 * each line and below the last one, and never clears the screen, so nothing reaches the terminal's
 * scrollback. {@link #stop()} (or a shutdown hook, on Ctrl-C) returns to the normal screen as it
 * was.
 */
final class Screen {
  static final String ENTER = "\033[?1049h\033[?25l";
  static final String LEAVE = "\033[?25h\033[?1049l";
  static final String HOME = "\033[H";
  private static final String ERASE_LINE = "\033[K";
  private static final String ERASE_BELOW = "\033[J";
  private static final long REFRESH_MS = 250;

  private final PrintStream out;
  private final Supplier<String> content;
  private final Thread thread;
  private final Thread restore;
  private volatile boolean stopped;
  private boolean left;

  Screen(PrintStream out, Supplier<String> content) {
    this.out = out;
    this.content = content;
    this.thread = new Thread(this::loop, "demo-screen");
    thread.setDaemon(true);
    this.restore = new Thread(this::leave, "demo-screen-restore");
  }

  Screen start() {
    synchronized (out) {
      out.print(ENTER);
      out.flush();
    }
    Runtime.getRuntime().addShutdownHook(restore);
    thread.start();
    return this;
  }

  /** One frame: cursor home, each line erased to its end, everything below the last erased. */
  static String frame(String text) {
    String body = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    return HOME + body.replace("\n", ERASE_LINE + "\r\n") + ERASE_LINE + ERASE_BELOW;
  }

  private void loop() {
    while (!stopped) {
      try {
        String text = content.get();
        synchronized (out) {
          if (!stopped) {
            out.print(frame(text));
            out.flush();
          }
        }
        Thread.sleep(REFRESH_MS);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        // a half-built observation: draw the next one
      }
    }
  }

  private void leave() {
    synchronized (out) {
      if (!left) {
        left = true;
        out.print(LEAVE);
        out.flush();
      }
    }
  }

  void stop() {
    stopped = true;
    thread.interrupt();
    try {
      thread.join(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    leave();
    try {
      Runtime.getRuntime().removeShutdownHook(restore);
    } catch (IllegalStateException e) {
      // already shutting down: the hook runs (and does nothing, the screen is left)
    }
  }
}
