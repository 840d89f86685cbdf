package dev.vigil.demo;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Every series the operator's {@code /metrics} showed while the demo ran, as a Prometheus scraping
 * it every second would have stored them: a gauge such as {@code vigil_backend_ejected} exists only
 * while a backend is ejected, so one scrape at the end would miss it. Used to check the alerts and
 * the dashboard against what the operator really exports.
 */
final class SeriesRecorder implements AutoCloseable {
  private final Supplier<String> scrape;
  private final Map<String, String> series = new LinkedHashMap<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "demo-scraper");
            t.setDaemon(true);
            return t;
          });

  SeriesRecorder(Supplier<String> scrape) {
    this.scrape = scrape;
  }

  SeriesRecorder start(long periodMs) {
    timer.scheduleWithFixedDelay(this::record, 0, periodMs, TimeUnit.MILLISECONDS);
    return this;
  }

  /** Scrapes once more and returns each series seen, with its last value, in the text format. */
  String series() {
    record();
    synchronized (series) {
      StringBuilder text = new StringBuilder();
      series.values().forEach(line -> text.append(line).append('\n'));
      return text.toString();
    }
  }

  private void record() {
    String text = scrape.get();
    synchronized (series) {
      for (String line : text.split("\n")) {
        if (!line.isBlank() && !line.startsWith("#")) {
          int end = line.lastIndexOf('}');
          String key = end > 0 ? line.substring(0, end + 1) : line.split(" ", 2)[0];
          series.put(key, line);
        }
      }
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
