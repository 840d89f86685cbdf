package dev.vigil.demo;

import java.io.PrintStream;
import java.util.function.Supplier;

/** Redraws a text screen in place on a terminal (cursor home, clear) a few times a second. */
final class Screen {
  private static final long REFRESH_MS = 250;

  private final PrintStream out;
  private final Supplier<String> content;
  private final Thread thread;
  private volatile boolean stopped;

  Screen(PrintStream out, Supplier<String> content) {
    this.out = out;
    this.content = content;
    this.thread = new Thread(this::loop, "demo-screen");
    thread.setDaemon(true);
  }

  Screen start() {
    thread.start();
    return this;
  }

  private void loop() {
    while (!stopped) {
      try {
        String text = content.get();
        synchronized (out) {
          out.print("\033[H\033[2J" + text);
          out.flush();
        }
        Thread.sleep(REFRESH_MS);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        // a half-built observation: draw the next one
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
  }
}
