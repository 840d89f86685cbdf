package dev.vigil.demo;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real HTTP backend on a loopback address whose behaviour can be switched at any time: healthy,
 * failing with 503, hanging, refusing connections, flapping, or passing {@code /healthz} while
 * failing real requests. The demo and the tests use it as the Pods' workload.
 */
public final class DemoBackend {
  /** How the backend answers. */
  public enum Mode {
    /** 200 on every path. */
    HEALTHY,
    /** 503 on every path. */
    FAILING,
    /** Accepts and never answers. */
    HANG,
    /** Not listening: connection refused. */
    REFUSE,
    /** Alternates 200 and 503 on the health path, request by request; 200 elsewhere. */
    FLAP,
    /** 200 on the health path, 500 on every other path: only real traffic sees the problem. */
    TRAFFIC_FAILS
  }

  private final Vertx vertx;
  private final String host;
  private final int port;
  private final String healthPath;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong healthChecks = new AtomicLong();
  private final AtomicLong failedHealthChecks = new AtomicLong();
  private volatile Mode mode = Mode.HEALTHY;
  private HttpServer server;

  public DemoBackend(Vertx vertx, String host, int port) {
    this(vertx, host, port, "/healthz");
  }

  /**
   * @param healthPath the path the health check asks for: FLAP and TRAFFIC_FAILS treat it apart
   *     from real traffic (any other path)
   */
  public DemoBackend(Vertx vertx, String host, int port, String healthPath) {
    this.vertx = vertx;
    this.host = host;
    this.port = port;
    this.healthPath = healthPath;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  public Mode mode() {
    return mode;
  }

  public long requests() {
    return requests.get();
  }

  /** Health checks answered with a failure status (503), in any mode, since the start. */
  public long failedHealthChecks() {
    return failedHealthChecks.get();
  }

  /** Starts listening (unless the mode is REFUSE). */
  public Future<Void> start() {
    return mode == Mode.REFUSE ? Future.succeededFuture() : listen();
  }

  /** Switches behaviour; REFUSE closes the listener, leaving REFUSE listens again. */
  public Future<Void> set(Mode next) {
    Mode previous = mode;
    mode = next;
    if (next == Mode.REFUSE && previous != Mode.REFUSE) {
      return stopListening();
    }
    if (previous == Mode.REFUSE && next != Mode.REFUSE) {
      return listen();
    }
    return Future.succeededFuture();
  }

  private Future<Void> listen() {
    HttpServer s =
        vertx.createHttpServer(
            new HttpServerOptions().setHost(host).setPort(port).setReuseAddress(true));
    s.requestHandler(this::handle);
    return s.listen().onSuccess(ok -> server = s).mapEmpty();
  }

  private Future<Void> stopListening() {
    HttpServer s = server;
    server = null;
    return s == null ? Future.succeededFuture() : s.close();
  }

  private void handle(HttpServerRequest request) {
    requests.incrementAndGet();
    boolean health = request.path().equals(healthPath);
    long n = health ? healthChecks.incrementAndGet() : 0;
    int status =
        switch (mode) {
          case HEALTHY -> 200;
          case FAILING -> 503;
          case FLAP -> health && n % 2 == 0 ? 503 : 200;
          case TRAFFIC_FAILS -> health ? 200 : 500;
          case HANG, REFUSE -> -1;
        };
    if (status < 0) {
      return;
    }
    if (health && status >= 500) {
      failedHealthChecks.incrementAndGet();
    }
    request.response().setStatusCode(status).end(status == 200 ? "ok\n" : "failing\n");
  }

  public Future<Void> stop() {
    return stopListening();
  }
}
