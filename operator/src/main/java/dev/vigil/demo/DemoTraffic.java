package dev.vigil.demo;

import dev.vigil.demo.OutcomeReporter.Outcome;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The demo's proxy: while on, it sends one real request per tick to every backend the EndpointSlice
 * lists as ready (read from the API server, as a consumer would), and reports each outcome to
 * Vigil. A 5xx is an upstream error; no answer at all is a local-origin error.
 */
public final class DemoTraffic implements AutoCloseable {
  private final Supplier<Set<String>> readyAddresses;
  private final int port;
  private final String path;
  private final String namespace;
  private final String pool;
  private final OutcomeReporter reporter;
  private final long tickMs;
  private final long timeoutMs;
  private final HttpClient http;
  private final Thread thread;
  private volatile boolean on;
  private volatile boolean closed;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong reported = new AtomicLong();
  private volatile String lastError;
  private final Object tickLock = new Object();
  private boolean ticking;

  public DemoTraffic(
      Supplier<Set<String>> readyAddresses,
      int port,
      String path,
      String namespace,
      String pool,
      OutcomeReporter reporter,
      long tickMs,
      long timeoutMs) {
    this.readyAddresses = readyAddresses;
    this.port = port;
    this.path = path;
    this.namespace = namespace;
    this.pool = pool;
    this.reporter = reporter;
    this.tickMs = tickMs;
    this.timeoutMs = timeoutMs;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofMillis(timeoutMs))
            .build();
    this.thread = new Thread(this::loop, "demo-traffic");
    thread.setDaemon(true);
    thread.start();
  }

  public void on(boolean value) {
    on = value;
  }

  /**
   * Turns the traffic off and waits (at most {@code waitMs}) for a tick under way to end, so no
   * outcome reaches Vigil after this returns: what the scenario measures next starts from here.
   */
  public void off(long waitMs) throws InterruptedException {
    on = false;
    synchronized (tickLock) {
      long deadline = System.nanoTime() + waitMs * 1_000_000;
      while (ticking && System.nanoTime() < deadline) {
        tickLock.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      }
    }
  }

  public long requests() {
    return requests.get();
  }

  public long failures() {
    return failures.get();
  }

  public long reported() {
    return reported.get();
  }

  /** The last reporting error, or null. */
  public String lastError() {
    return lastError;
  }

  public URI target() {
    return reporter.target(namespace, pool);
  }

  private void loop() {
    while (!closed) {
      long start = System.nanoTime();
      if (on) {
        synchronized (tickLock) {
          ticking = true;
        }
        try {
          tick();
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          lastError = e.getMessage();
        } finally {
          synchronized (tickLock) {
            ticking = false;
            tickLock.notifyAll();
          }
        }
      }
      long left = tickMs - (System.nanoTime() - start) / 1_000_000;
      try {
        Thread.sleep(Math.max(1, left));
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void tick() throws Exception {
    List<CompletableFuture<Outcome>> pending = new ArrayList<>();
    for (String ip : readyAddresses.get()) {
      pending.add(send(ip));
    }
    List<Outcome> batch = new ArrayList<>(pending.size());
    for (CompletableFuture<Outcome> f : pending) {
      Outcome o = f.join();
      requests.incrementAndGet();
      if (!o.ok()) {
        failures.incrementAndGet();
      }
      batch.add(o);
    }
    if (!on || batch.isEmpty()) {
      return;
    }
    reported.addAndGet(reporter.report(batch));
    lastError = null;
  }

  private CompletableFuture<Outcome> send(String ip) {
    long start = System.nanoTime();
    String backend = ip + ":" + port;
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://" + backend + path))
            .timeout(Duration.ofMillis(timeoutMs))
            .GET()
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.discarding())
        .handle(
            (response, error) -> {
              long latency = (System.nanoTime() - start) / 1_000_000;
              if (error != null) {
                return new Outcome(namespace, pool, backend, false, 0, "local", latency);
              }
              int status = response.statusCode();
              return new Outcome(
                  namespace, pool, backend, status < 500, status, "upstream", latency);
            });
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    reporter.close();
  }
}
