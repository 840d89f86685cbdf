package dev.vigil.ops;

import dev.vigil.security.ConnectionGate;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.RequestHeaders;
import dev.vigil.security.ReviewBudget;
import dev.vigil.security.ReviewCache;
import dev.vigil.security.Reviewer;
import dev.vigil.security.Reviews;
import dev.vigil.security.ServingCertificate;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;

/**
 * The operator's own endpoints on the metrics port: {@code GET /metrics} (Prometheus text), {@code
 * GET /healthz} (liveness: the event loops tick) and {@code GET /readyz} (readiness: see {@link
 * Readiness}). Served by a Vert.x HTTP server, no router needed for three paths.
 *
 * <p>Secured ({@link #secure}): the port serves TLS only, and {@code /metrics} answers only a
 * bearer token whose user the {@link Reviewer} allows {@code get} on {@code /metrics} (the API
 * server's own audience; 401 without or with a bad token, 403 without the permission; answers
 * cached 30 s, denials 5 s, at most 1,000 per cache, one review in flight per question and at most
 * {@value #MAX_PENDING_REVIEWS} in all: {@link Reviews}, the same as the outcome intake's). A token
 * that is not cached costs a TokenReview: each source address may cause {@code 1/s} of them (burst
 * 10) for tokens that turn out not to be valid, then gets 429 without a review.
 *
 * <p>The metrics port has the intake's bounds ({@link ConnectionGate}, {@link #DEFAULT_LIMITS}):
 * connections in all and per address, a deadline on each request head and on each answer.
 *
 * <p>The health port ({@link #listenHealth}) serves only {@code /healthz} and {@code /readyz}, in
 * plain HTTP and without a token, for the kubelet's probes; they stay on the metrics port too.
 */
public final class OpsServer {
  static final String TEXT = "text/plain; charset=utf-8";
  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  /**
   * The metrics port's connection limits: 64 connections, 16 per address, 5 s for a request head,
   * 10 s for an answer (the intake's defaults, scaled to a port scraped by a few Prometheus
   * replicas).
   */
  public static final ConnectionGate.Limits DEFAULT_LIMITS =
      new ConnectionGate.Limits(64, 16, 5_000, 10_000);

  /** Reviews of metrics tokens waiting or running at once; past it: 503 with Retry-After. */
  static final int MAX_PENDING_REVIEWS = 16;

  /** How the metrics port's reviews are kept and bounded. */
  static final Reviews.Policy REVIEW_POLICY =
      new Reviews.Policy(1_000, MAX_PENDING_REVIEWS, 30_000, 5_000);

  /** The metrics port's reviews; each source address may cause 1 failed review/s, 10 at once. */
  public static final ReviewBudget REVIEW_BUDGET = new ReviewBudget(REVIEW_POLICY, 1, 10);

  private final Vertx vertx;
  private final PrometheusMeterRegistry registry;
  private final PoolGauges gauges;
  private final Heartbeat heartbeat;
  private final Readiness readiness;
  private HttpServer server;
  private HttpServer healthServer;
  private ServingCertificate certificate;
  private WorkerExecutor reviewers;
  private Reviews reviews;
  private final ConnectionGate gate;

  /** The scrape in flight: concurrent scrapes share it (single-flight, as reviews are). */
  private Future<String> scraping;

  public OpsServer(
      Vertx vertx,
      PrometheusMeterRegistry registry,
      PoolGauges gauges,
      Heartbeat heartbeat,
      Readiness readiness) {
    this(vertx, registry, gauges, heartbeat, readiness, DEFAULT_LIMITS);
  }

  /** With the metrics port's connection limits (the health port has none: only the kubelet). */
  public OpsServer(
      Vertx vertx,
      PrometheusMeterRegistry registry,
      PoolGauges gauges,
      Heartbeat heartbeat,
      Readiness readiness,
      ConnectionGate.Limits limits) {
    this.gate =
        new ConnectionGate(
            vertx,
            limits,
            why ->
                registry
                    .counter(
                        "vigil_metrics_connections_closed_total",
                        "reason",
                        why.name().toLowerCase(java.util.Locale.ROOT))
                    .increment());
    this.vertx = vertx;
    this.registry = registry;
    this.gauges = gauges;
    this.heartbeat = heartbeat;
    this.readiness = readiness;
  }

  /** Serves TLS with this certificate and lets only callers the reviewer allows read metrics. */
  public OpsServer secure(ServingCertificate certificate, Reviewer reviewer) {
    return secure(certificate, reviewer, REVIEW_BUDGET, System::currentTimeMillis);
  }

  /**
   * As {@link #secure(ServingCertificate, Reviewer)}, with the budget per source address that
   * TokenReviews of tokens that are not accepted are paid from, and the clock it refills by.
   */
  public OpsServer secure(
      ServingCertificate certificate,
      Reviewer reviewer,
      ReviewBudget budget,
      java.util.function.LongSupplier clock) {
    this.certificate = certificate;
    this.reviewers = vertx.createSharedWorkerExecutor("vigil-metrics-reviews", 2);
    this.reviews = budget.reviews(reviewer, reviewers, clock);
    return this;
  }

  /** Listens on {@code port} (0 = a free port); completes with the bound port. */
  public Future<Integer> listen(int port) {
    io.vertx.core.http.HttpServerOptions options =
        new io.vertx.core.http.HttpServerOptions()
            // HTTP/1.1 only: the gate sees each connection as it opens (h2c detection would
            // wait for the first bytes), and Prometheus scrapes over HTTP/1.1.
            .setHttp2ClearTextEnabled(false)
            .setIdleTimeout(60)
            .setIdleTimeoutUnit(java.util.concurrent.TimeUnit.SECONDS);
    if (certificate != null) {
      options
          .setSsl(true)
          .setKeyCertOptions(certificate.options())
          .setSslHandshakeTimeout(gate.limits().headerTimeoutMs())
          .setSslHandshakeTimeoutUnit(java.util.concurrent.TimeUnit.MILLISECONDS);
    }
    server = gate.guard(vertx.createHttpServer(options), this::handle);
    if (certificate != null) {
      certificate.serve(server);
    }
    return server.listen(port).map(HttpServer::actualPort);
  }

  /**
   * Listens in plain HTTP on {@code port} (0 = a free port) for {@code /healthz} and {@code
   * /readyz} only; completes with the bound port.
   */
  public Future<Integer> listenHealth(int port) {
    healthServer = vertx.createHttpServer().requestHandler(this::handleHealth);
    return healthServer.listen(port).map(HttpServer::actualPort);
  }

  /** The bound port, or -1 before {@link #listen}. */
  public int port() {
    return server == null ? -1 : server.actualPort();
  }

  /** The health port, or -1 when {@link #listenHealth} was not called. */
  public int healthPort() {
    return healthServer == null ? -1 : healthServer.actualPort();
  }

  private void handleHealth(HttpServerRequest request) {
    if (!allowedMethod(request)) {
      return;
    }
    switch (request.path()) {
      case "/healthz" -> healthz(request);
      case "/readyz" -> readyz(request);
      default ->
          reply(
              request,
              404,
              "not found: this port serves /healthz and /readyz (metrics: the metrics port)\n");
    }
  }

  private static boolean allowedMethod(HttpServerRequest request) {
    if (request.method() != HttpMethod.GET && request.method() != HttpMethod.HEAD) {
      request.response().setStatusCode(405).putHeader("Allow", "GET, HEAD").end();
      return false;
    }
    return true;
  }

  private void handle(HttpServerRequest request) {
    if (!allowedMethod(request)) {
      return;
    }
    switch (request.path()) {
      case "/metrics" -> {
        if (reviews == null) {
          metrics(request);
        } else {
          authorized(request);
        }
      }
      case "/healthz" -> healthz(request);
      case "/readyz" -> readyz(request);
      default -> reply(request, 404, "not found: try /metrics, /healthz or /readyz\n");
    }
  }

  private void authorized(HttpServerRequest request) {
    String token = RequestHeaders.bearer(request.getHeader("Authorization"));
    if (token == null) {
      request.response().putHeader("WWW-Authenticate", "Bearer");
      reply(request, 401, "send Authorization: Bearer <token>\n");
      return;
    }
    String source =
        request.remoteAddress() == null
            ? ""
            : String.valueOf(request.remoteAddress().hostAddress());
    reviews
        .authenticate(token, source)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                reviewFailed(request, source, ar.cause());
              } else if (ar.result().isEmpty()) {
                request.response().putHeader("WWW-Authenticate", "Bearer");
                reply(request, 401, "the token was not accepted\n");
              } else {
                permitted(request, source, ar.result().get());
              }
            });
  }

  private void permitted(HttpServerRequest request, String source, Identity who) {
    reviews
        .allows(who, Permission.READ_METRICS)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                reviewFailed(request, source, ar.cause());
              } else if (ar.result()) {
                metrics(request);
              } else {
                reply(request, 403, "get on /metrics is not allowed for this user\n");
              }
            });
  }

  private void reviewFailed(HttpServerRequest request, String source, Throwable cause) {
    if (cause instanceof ReviewCache.Throttled) {
      request.response().putHeader("Retry-After", Long.toString(reviews.retryAfterSeconds(source)));
      reply(request, 429, "too many tokens from this address were not accepted; retry\n");
    } else if (cause instanceof ReviewCache.Saturated) {
      request.response().putHeader("Retry-After", "1");
      reply(request, 503, "too many reviews in flight; retry\n");
    } else {
      // The API server's message stays in the log: the caller may be anyone.
      org.slf4j.LoggerFactory.getLogger(OpsServer.class)
          .warn("metrics: review failed: {}", cause.toString());
      request.response().putHeader("Retry-After", "1");
      reply(request, 503, "could not review the caller; retry\n");
    }
  }

  private void metrics(HttpServerRequest request) {
    // Rendering reads every pool's view: off the event loop, so probes never wait for a scrape;
    // concurrent scrapes share one rendering.
    Future<String> text;
    synchronized (this) {
      if (scraping == null || scraping.isComplete()) {
        scraping =
            vertx.executeBlocking(
                () -> {
                  gauges.refresh();
                  return registry.scrape();
                },
                false);
      }
      text = scraping;
    }
    text.onComplete(
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
    if (request.response().ended() || request.response().closed()) {
      return;
    }
    request.response().setStatusCode(status).putHeader("Content-Type", TEXT).end(body);
  }

  /** Open connections to the metrics port now (for tests). */
  int connections() {
    return gate.connections();
  }

  public Future<Void> close() {
    heartbeat.stop();
    if (certificate != null) {
      certificate.close();
    }
    if (reviewers != null) {
      reviewers.close();
    }
    Future<Void> health = healthServer == null ? Future.succeededFuture() : healthServer.close();
    return server == null ? health : Future.join(health, server.close()).mapEmpty();
  }
}
