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
 * Readiness}). Served by a Vert.x HTTP server, no router needed for three paths.
 *
 * <p>Secured ({@link #secure}): the port serves TLS only, and {@code /metrics} answers only a
 * bearer token that {@link MetricsAccess} allows (401 without or with a bad token, 403 without the
 * permission; verdicts cached 30 s, denials 5 s, at most 1,000 tokens). A token that is not cached
 * costs a TokenReview: each source address may cause {@code 1/s} of them (burst 10) for tokens that
 * turn out not to be valid, then gets 429 without a review.
 *
 * <p>The health port ({@link #listenHealth}) serves only {@code /healthz} and {@code /readyz}, in
 * plain HTTP and without a token, for the kubelet's probes; they stay on the metrics port too.
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
  private HttpServer healthServer;
  private MetricsAccess access;
  private TokenBuckets failedAuthentications;
  private ServingCertificate certificate;
  private final java.util.Map<String, long[]> verdicts =
      new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<String, long[]> eldest) {
          return size() > 1_000;
        }
      };

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

  /** Serves TLS with this certificate and lets only callers {@code access} allows read metrics. */
  public OpsServer secure(ServingCertificate certificate, MetricsAccess access) {
    return secure(certificate, access, new TokenBuckets(1, 10, 1_000, System::currentTimeMillis));
  }

  /**
   * As {@link #secure(ServingCertificate, MetricsAccess)}, with the bucket per source address that
   * TokenReviews of tokens that are not accepted are paid from.
   */
  public OpsServer secure(
      ServingCertificate certificate, MetricsAccess access, TokenBuckets failedAuthentications) {
    this.certificate = certificate;
    this.access = access;
    this.failedAuthentications = failedAuthentications;
    return this;
  }

  /** Listens on {@code port} (0 = a free port); completes with the bound port. */
  public Future<Integer> listen(int port) {
    io.vertx.core.http.HttpServerOptions options = new io.vertx.core.http.HttpServerOptions();
    if (certificate != null) {
      options.setSsl(true).setKeyCertOptions(certificate.options());
    }
    server = vertx.createHttpServer(options).requestHandler(this::handle);
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
        if (access == null) {
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
    String header = request.getHeader("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7) || header.length() < 8) {
      request.response().putHeader("WWW-Authenticate", "Bearer");
      reply(request, 401, "send Authorization: Bearer <token>\n");
      return;
    }
    String token = header.substring(7).trim();
    String key = digest(token);
    long now = System.currentTimeMillis();
    long[] cached;
    synchronized (verdicts) {
      cached = verdicts.get(key);
    }
    if (cached != null && cached[1] > now) {
      answer(request, MetricsAccess.Verdict.values()[(int) cached[0]]);
      return;
    }
    // A token that is not cached costs a TokenReview: paid from the source's bucket, given back
    // when the token is valid, so made-up tokens cost a bounded number of reviews.
    String source =
        request.remoteAddress() == null
            ? ""
            : String.valueOf(request.remoteAddress().hostAddress());
    if (!failedAuthentications.tryAcquire(source)) {
      request
          .response()
          .putHeader("Retry-After", Long.toString(failedAuthentications.retryAfterSeconds(source)));
      reply(request, 429, "too many tokens from this address were not accepted; retry later\n");
      return;
    }
    vertx
        .executeBlocking(() -> access.check(token), false)
        .onComplete(
            ar -> {
              if (ar.failed() || ar.result() != MetricsAccess.Verdict.UNAUTHENTICATED) {
                failedAuthentications.refund(source);
              }
              if (ar.failed()) {
                // The API server's message stays in the log: the caller may be anyone.
                org.slf4j.LoggerFactory.getLogger(OpsServer.class)
                    .warn("metrics: review failed: {}", ar.cause().toString());
                reply(request, 503, "could not review the caller; retry\n");
                return;
              }
              MetricsAccess.Verdict v = ar.result();
              long ttl = v == MetricsAccess.Verdict.ALLOWED ? 30_000 : 5_000;
              synchronized (verdicts) {
                verdicts.put(key, new long[] {v.ordinal(), System.currentTimeMillis() + ttl});
              }
              answer(request, v);
            });
  }

  private void answer(HttpServerRequest request, MetricsAccess.Verdict verdict) {
    switch (verdict) {
      case ALLOWED -> metrics(request);
      case UNAUTHENTICATED -> {
        request.response().putHeader("WWW-Authenticate", "Bearer");
        reply(request, 401, "the token was not accepted\n");
      }
      case FORBIDDEN -> reply(request, 403, "get on /metrics is not allowed for this user\n");
    }
  }

  private static String digest(String token) {
    try {
      return java.util.HexFormat.of()
          .formatHex(
              java.security.MessageDigest.getInstance("SHA-256")
                  .digest(token.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
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
    if (certificate != null) {
      certificate.close();
    }
    Future<Void> health = healthServer == null ? Future.succeededFuture() : healthServer.close();
    return server == null ? health : Future.join(health, server.close()).mapEmpty();
  }
}
