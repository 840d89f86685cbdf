package dev.vigil.ops;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;

/**
 * The operator's own endpoints on the metrics port: {@code GET /metrics} (Prometheus text), {@code
 * GET /healthz} (liveness: the event loops tick) and {@code GET /readyz} (readiness: see {@link
 * Readiness}). Served by a plain Vert.x HTTP server, no router needed for three paths.
 */
public final class OpsServer {
  static final String TEXT = "text/plain; charset=utf-8";
  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final Vertx vertx;
  private final PrometheusMeterRegistry registry;
  private final PoolGauges gauges;
  private final Heartbeat heartbeat;
  private final Readiness readiness;
  private HttpServer server;

  public OpsServer(
      Vertx vertx,
      PrometheusMeterRegistry registry,
      PoolGauges gauges,
      Heartbeat heartbeat,
      Readiness readiness) {
    this.vertx = vertx;
    this.registry = registry;
    this.gauges = gauges;
    this.heartbeat = heartbeat;
    this.readiness = readiness;
  }

  /** Listens on {@code port} (0 = a free port); completes with the bound port. */
  public Future<Integer> listen(int port) {
    server = vertx.createHttpServer().requestHandler(this::handle);
    return server.listen(port).map(HttpServer::actualPort);
  }

  /** The bound port, or -1 before {@link #listen}. */
  public int port() {
    return server == null ? -1 : server.actualPort();
  }

  private void handle(HttpServerRequest request) {
    if (request.method() != HttpMethod.GET && request.method() != HttpMethod.HEAD) {
      request.response().setStatusCode(405).putHeader("Allow", "GET, HEAD").end();
      return;
    }
    switch (request.path()) {
      case "/metrics" -> metrics(request);
      case "/healthz" -> healthz(request);
      case "/readyz" -> readyz(request);
      default -> reply(request, 404, "not found: try /metrics, /healthz or /readyz\n");
    }
  }

  private void metrics(HttpServerRequest request) {
    // Rendering reads every pool's view: off the event loop, so probes never wait for a scrape.
    vertx
        .executeBlocking(
            () -> {
              gauges.refresh();
              return registry.scrape();
            },
            false)
        .onComplete(
            ar -> {
              if (ar.succeeded()) {
                request.response().putHeader("Content-Type", PROMETHEUS_TEXT).end(ar.result());
              } else {
                reply(request, 500, "metrics failed: " + ar.cause() + "\n");
              }
            });
  }

  private void healthz(HttpServerRequest request) {
    if (heartbeat.alive()) {
      reply(request, 200, "ok\n");
    } else {
      reply(
          request, 503, "event loop stuck: last tick " + heartbeat.sinceLastTickMs() + " ms ago\n");
    }
  }

  private void readyz(HttpServerRequest request) {
    Readiness.Verdict verdict = readiness.check();
    reply(request, verdict.ready() ? 200 : 503, verdict.detail() + "\n");
  }

  private static void reply(HttpServerRequest request, int status, String body) {
    request.response().setStatusCode(status).putHeader("Content-Type", TEXT).end(body);
  }

  public Future<Void> close() {
    heartbeat.stop();
    return server == null ? Future.succeededFuture() : server.close();
  }
}
