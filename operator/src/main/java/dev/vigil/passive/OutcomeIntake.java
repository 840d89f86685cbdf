package dev.vigil.passive;

import dev.vigil.ops.ConnectionGate;
import dev.vigil.ops.ReviewCache;
import dev.vigil.ops.ServingCertificate;
import dev.vigil.ops.TokenBuckets;
import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The passive outcome intake (docs/design.md §4): {@code POST
 * /v1/namespaces/{ns}/backendpools/{name}/ outcomes} on its own TLS-only port takes a batch of one
 * pool's real-request outcomes from a proxy or sidecar and feeds the pool's runtime in one hop.
 *
 * <p>The pool is in the URL so that everything that costs the caller nothing is decided before the
 * body is read: the bearer token (TokenReview for Vigil's audience), the identity's rate, {@code
 * create backendpools/outcomes} on the pool (SubjectAccessReview), whether this replica runs the
 * pool (a standby answers 503 with Retry-After; the leader answers a pool that does not run here
 * exactly as one the caller may not report for: 403, so no caller learns which pools exist in
 * namespaces it cannot report for) and a share of the bytes-in-flight budget ({@link ByteShares}:
 * shared fairly between source addresses). Only then is the body read, under a byte limit, and
 * parsed as a whole. One deadline covers the whole request; the {@link ConnectionGate} bounds
 * connections (in all and per address) and the time to send a request head. Reviews run on a
 * bounded worker pool and are cached; nothing here blocks an event loop. A refused request changes
 * nothing; a processed one says per rejected item why; replies to callers never carry an API
 * server's message.
 */
public final class OutcomeIntake {
  public static final String PATH_TEMPLATE =
      "/v1/namespaces/{namespace}/backendpools/{name}/outcomes";
  private static final Logger LOG = LoggerFactory.getLogger(OutcomeIntake.class);
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern SUBDOMAIN =
      Pattern.compile(
          "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /** How long a connection answered before its body was read may drain before it is closed. */
  private static final long DRAIN_MS = 1_000;

  private final Vertx vertx;
  private final PoolRuntimes runtimes;
  private final IntakeLimits limits;
  private final IntakeMetrics metrics;
  private final OutcomeParser parser;
  private final PoolQueues queues;
  private final WorkerExecutor workers;
  private final Reviews reviews;
  private final TokenBuckets rates;
  private final TokenBuckets failedAuthentications;
  private final BooleanSupplier runsPools;
  private final ServingCertificate certificate;
  private final ConnectionGate gate;
  private final ByteShares bytesInFlight;
  private HttpServer server;

  /** Stopping: every request is answered 503 with Connection: close, nothing is applied. */
  private volatile boolean stopping;

  /** How long a stopping intake answers on open connections before it shuts the server down. */
  private static final long STOPPING_MS = 1_000;

  /** How long a shutdown waits for the batches in flight to be answered. */
  private static final long SHUTDOWN_MS = 5_000;

  /**
   * @param runsPools whether this replica runs BackendPools now (leads, or is the only replica): a
   *     standby answers 503 with Retry-After, so the reporter retries and reaches the leader
   * @param certificate the port's certificate and key (rotations are applied as they come)
   */
  public OutcomeIntake(
      Vertx vertx,
      PoolRuntimes runtimes,
      Reviewer reviewer,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      BooleanSupplier runsPools,
      ServingCertificate certificate) {
    this.vertx = vertx;
    this.runtimes = runtimes;
    this.limits = limits;
    this.metrics = new IntakeMetrics(meters);
    this.parser = new OutcomeParser(limits, clock);
    this.queues = new PoolQueues(limits.queuePerPool());
    this.workers = vertx.createSharedWorkerExecutor("vigil-reviews", 4);
    this.reviews = new Reviews(reviewer, workers, limits, clock);
    this.rates =
        new TokenBuckets(
            limits.requestsPerSecond(), limits.requestBurst(), limits.maxCachedReviews(), clock);
    this.failedAuthentications =
        new TokenBuckets(
            limits.failedAuthPerSecond(),
            limits.failedAuthBurst(),
            limits.maxCachedReviews(),
            clock);
    this.runsPools = runsPools;
    this.certificate = certificate;
    this.gate = new ConnectionGate(vertx, limits.connectionLimits(), metrics::connectionClosed);
    this.bytesInFlight = new ByteShares(limits.maxBytesInFlight());
  }

  /** The URL path of a pool's outcomes. */
  public static String path(String namespace, String name) {
    return "/v1/namespaces/" + namespace + "/backendpools/" + name + "/outcomes";
  }

  /** Listens with TLS on the port (0 = a free one); the future holds the bound port. */
  public Future<Integer> listen(String host, int port) {
    HttpServer s =
        vertx.createHttpServer(
            new HttpServerOptions()
                .setHost(host)
                .setPort(port)
                .setSsl(true)
                .setKeyCertOptions(certificate.options())
                .setSslHandshakeTimeout(Math.max(1, limits.requestTimeoutMs()))
                .setSslHandshakeTimeoutUnit(TimeUnit.MILLISECONDS)
                .setIdleTimeout((int) Math.max(1, limits.requestTimeoutMs() / 1000 * 6))
                .setIdleTimeoutUnit(TimeUnit.SECONDS));
    gate.guard(s, this::handle);
    certificate.serve(s);
    return s.listen()
        .map(
            bound -> {
              server = bound;
              LOG.info("outcome intake listening (TLS) on {}:{}", host, bound.actualPort());
              return bound.actualPort();
            });
  }

  /**
   * Stops taking outcomes without leaving a reporter unanswered: while connections are open, for
   * {@code STOPPING_MS} every new request is answered 503 with Retry-After and {@code Connection:
   * close} (a reporter's kept-alive connection gets an answer, not a reset, and its retry reaches
   * another replica); then the server shuts down, answering the batches still in flight (for at
   * most {@code SHUTDOWN_MS}) before it closes their connections. A batch answered 2xx was applied;
   * one that got no answer was never read.
   */
  public Future<Void> close() {
    stopping = true;
    Future<Void> closing;
    if (server == null) {
      closing = Future.succeededFuture();
    } else {
      HttpServer s = server;
      Future<Void> answered =
          gate.connections() == 0 ? Future.succeededFuture() : vertx.timer(STOPPING_MS).mapEmpty();
      closing = answered.compose(v -> s.shutdown(SHUTDOWN_MS, TimeUnit.MILLISECONDS));
    }
    return closing.eventually(
        () -> {
          certificate.close();
          return workers.close();
        });
  }

  /** Open connections and body bytes reserved now (for tests and the load run). */
  int connections() {
    return gate.connections();
  }

  long bytesInFlight() {
    return bytesInFlight.held();
  }

  private void handle(HttpServerRequest req) {
    req.pause();
    if (stopping) {
      req.response()
          .putHeader(HttpHeaders.RETRY_AFTER, "2")
          .putHeader(HttpHeaders.CONNECTION, "close");
      refuse(req, 503, "stopping", "this replica is stopping; nothing was applied, retry");
      return;
    }
    PoolKey pool = route(req.path());
    if (pool == null) {
      refuse(
          req,
          404,
          "not_found",
          "outcomes go to POST "
              + PATH_TEMPLATE
              + " with Kubernetes names"
              + (req.path().equals("/v1/outcomes")
                  ? " (the multi-pool /v1/outcomes is gone: the pool is authorized before the body"
                      + " is read)"
                  : ""));
      return;
    }
    if (req.method() != HttpMethod.POST) {
      req.response().putHeader(HttpHeaders.ALLOW, "POST");
      refuse(req, 405, "method_not_allowed", "use POST " + PATH_TEMPLATE);
      return;
    }
    String token = bearer(req.getHeader(HttpHeaders.AUTHORIZATION));
    if (token == null) {
      refuse(req, 401, "unauthenticated", "send Authorization: Bearer <ServiceAccount token>");
      return;
    }
    OutcomeParser.Format format = format(req.getHeader(HttpHeaders.CONTENT_TYPE));
    if (format == null) {
      refuse(
          req,
          415,
          "unsupported_media_type",
          "Content-Type must be application/json (an array) or application/x-ndjson");
      return;
    }
    long declared = contentLength(req.getHeader(HttpHeaders.CONTENT_LENGTH));
    if (declared > limits.maxBodyBytes()) {
      refuse(req, 413, "body_too_large", tooLarge());
      return;
    }
    new Exchange(req, pool, token, format, declared, vertx.getOrCreateContext()).start();
  }

  /** The pool of {@code /v1/namespaces/{ns}/backendpools/{name}/outcomes}, or null. */
  static PoolKey route(String path) {
    String[] p = path.split("/", -1);
    if (p.length != 7
        || !p[0].isEmpty()
        || !p[1].equals("v1")
        || !p[2].equals("namespaces")
        || !p[4].equals("backendpools")
        || !p[6].equals("outcomes")
        || !LABEL.matcher(p[3]).matches()
        || !SUBDOMAIN.matcher(p[5]).matches()) {
      return null;
    }
    return new PoolKey(p[3], p[5]);
  }

  /** One request, from its headers to its reply. Runs on the intake's event loop. */
  private final class Exchange implements ByteShares.Holder {
    final HttpServerRequest req;
    final PoolKey pool;
    final String token;
    final OutcomeParser.Format format;
    final long declared;
    final Context context;
    Buffer body;
    boolean bodyDone;
    long timer;

    Exchange(
        HttpServerRequest req,
        PoolKey pool,
        String token,
        OutcomeParser.Format format,
        long declared,
        Context context) {
      this.req = req;
      this.pool = pool;
      this.token = token;
      this.format = format;
      this.declared = declared;
      this.context = context;
    }

    void start() {
      timer = vertx.setTimer(limits.requestTimeoutMs(), id -> timeUp());
      req.response().endHandler(v -> finish());
      req.response().closeHandler(v -> finish());
      // A token not in the cache costs a TokenReview: the source pays one from its bucket of
      // failed authentications, and gets it back when the token is accepted.
      String source = source(req);
      boolean[] charged = {false};
      Future<Optional<Identity>> review =
          reviews.authenticate(token, () -> charged[0] = failedAuthentications.tryAcquire(source));
      review.onFailure(
          e -> {
            if (charged[0]) {
              failedAuthentications.refund(source); // the API server failed, not the token
            }
          });
      on(
          review,
          who -> {
            if (who.isPresent() && charged[0]) {
              failedAuthentications.refund(source);
            }
            if (who.isEmpty()) {
              refuse(
                  req,
                  401,
                  "unauthenticated",
                  "the token was not accepted: send a ServiceAccount token projected for Vigil's"
                      + " audience");
            } else {
              admit(who.get());
            }
          });
    }

    /** An authenticated caller: rate, the permission, then the pool's runtime. */
    void admit(Identity who) {
      if (!rates.tryAcquire(who.username())) {
        req.response()
            .putHeader(
                HttpHeaders.RETRY_AFTER, Long.toString(rates.retryAfterSeconds(who.username())));
        refuse(
            req,
            429,
            "rate_limited",
            who.username()
                + " sends more than "
                + limits.requestsPerSecond()
                + " requests/s; send fewer, larger batches");
        return;
      }
      on(
          reviews.mayReport(who, pool),
          allowed -> {
            if (!allowed) {
              forbidden(who);
            } else if (runtimes.get(pool).isEmpty()) {
              notHere(who);
            } else {
              read();
            }
          });
    }

    /**
     * One answer for "not allowed" and "no such pool here" (issue 31, item 7 of the table): the
     * same status and body, so a caller cannot tell which pools exist in namespaces it may not
     * report for.
     */
    void forbidden(Identity who) {
      refuse(
          req,
          403,
          "forbidden",
          who.username()
              + " may not create backendpools/outcomes for pool "
              + pool
              + ", or no such pool runs here");
    }

    /** Reserves the body's bytes, then reads it. */
    void read() {
      long want = declared >= 0 ? declared : limits.maxBodyBytes();
      if (!bytesInFlight.reserve(this, source(req), want)) {
        busy("the intake holds its limit of request bytes");
        return;
      }
      body = Buffer.buffer((int) Math.min(want, 64 * 1024));
      req.handler(
          chunk -> {
            if (ended()) {
              return;
            }
            if (body.length() + chunk.length() > limits.maxBodyBytes()) {
              refuse(req, 413, "body_too_large", tooLarge());
              return;
            }
            body.appendBuffer(chunk);
          });
      req.exceptionHandler(e -> LOG.debug("outcome request failed: {}", e.getMessage()));
      req.endHandler(
          v -> {
            bodyDone = true;
            if (!ended()) {
              apply();
            }
          });
      req.resume();
    }

    void apply() {
      OutcomeParser.Parsed batch;
      try {
        byte[] bytes = body.getBytes();
        body = null;
        batch = parser.parse(bytes, bytes.length, format, pool);
      } catch (BadBatch e) {
        refuse(req, e.status(), e.code(), e.getMessage());
        return;
      }
      metrics.received(batch.items());
      List<Rejection> rejections = new ArrayList<>(batch.rejections());
      List<Outcome> items = batch.outcomes();
      Optional<PoolRuntime> runtime = runtimes.get(pool);
      if (runtime.isEmpty() && !items.isEmpty()) {
        moving();
        return;
      }
      int granted = items.isEmpty() ? 0 : queues.reserve(pool, items.size());
      if (granted < items.size()) {
        metrics.overflow(pool, items.size() - granted);
        for (Outcome o : items.subList(granted, items.size())) {
          rejections.add(
              new Rejection(
                  o.index(),
                  RejectReason.QUEUE_FULL,
                  "pool " + pool + " has " + limits.queuePerPool() + " outcomes queued; retry"));
        }
      }
      if (granted == 0) {
        reply(batch.items(), 0, rejections);
        return;
      }
      List<Outcome> taken = items.subList(0, granted);
      List<OutcomeReport> reports = new ArrayList<>(granted);
      for (Outcome o : taken) {
        reports.add(o.report());
      }
      Future<AppliedOutcomes> applied = runtime.get().onOutcomes(reports);
      applied.onComplete(
          r ->
              context.runOnContext(
                  v -> {
                    queues.release(pool, granted);
                    if (r.cause() instanceof PoolRuntime.Closed) {
                      moving();
                      return;
                    }
                    reply(
                        batch.items(),
                        account(taken, r.result(), r.cause(), rejections),
                        rejections);
                  }));
    }

    /** Counts the pool's share and notes its unknown backends; returns how many were taken. */
    int account(
        List<Outcome> taken,
        AppliedOutcomes applied,
        Throwable failed,
        List<Rejection> rejections) {
      if (failed != null) {
        LOG.warn("outcomes for pool {} failed: {}", pool, failed.toString());
        for (Outcome o : taken) {
          rejections.add(
              new Rejection(
                  o.index(),
                  RejectReason.UNKNOWN_POOL,
                  "pool " + pool + " closed or could not apply the batch; retry"));
        }
        return 0;
      }
      applied.unknown().stream()
          .forEach(
              i ->
                  rejections.add(
                      new Rejection(
                          taken.get(i).index(),
                          RejectReason.UNKNOWN_BACKEND,
                          "pool " + pool + " has no backend at " + taken.get(i).ip())));
      for (AppliedOutcomes.Decided d : applied.decisions()) {
        metrics.decided(pool, d.decision().kind());
      }
      int accepted = taken.size() - applied.unknown().cardinality();
      metrics.accepted(pool, accepted);
      return accepted;
    }

    void reply(int items, int accepted, List<Rejection> rejections) {
      rejections.sort(Comparator.comparingInt(Rejection::index));
      JsonArray errors = new JsonArray();
      boolean full = false;
      for (Rejection r : rejections) {
        metrics.rejected(r.reason(), 1);
        full |= r.reason() == RejectReason.QUEUE_FULL;
        errors.add(
            new JsonObject()
                .put("index", r.index())
                .put("reason", r.reason().wire())
                .put("message", r.message()));
      }
      int status = accepted > 0 || items == 0 ? 200 : full ? 429 : 422;
      if (status == 429) {
        req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
      }
      send(
          req,
          status,
          new JsonObject()
              .put("accepted", accepted)
              .put("rejected", rejections.size())
              .put("errors", errors));
    }

    /**
     * An authorized caller's pool does not run here: a standby (or a shard that does not own it)
     * says retry; the leader answers as for a caller that may not report ({@link #forbidden}).
     */
    void notHere(Identity who) {
      if (!runsPools.getAsBoolean()) {
        elsewhere(
            "this replica does not run BackendPool "
                + pool
                + " now (it stands by, or another replica owns the pool); retry");
      } else {
        forbidden(who);
      }
    }

    /**
     * The pool's runtime closed between the check and the batch (a handoff to another replica, or
     * the pool's removal): nothing of the batch was applied, so the reporter sends it again.
     */
    void moving() {
      elsewhere(
          "BackendPool " + pool + " is moving to another replica; nothing was applied, retry");
    }

    /**
     * 503 with Retry-After: the reporter's next try reaches another replica (or this one later).
     */
    private void elsewhere(String message) {
      req.response().putHeader(HttpHeaders.RETRY_AFTER, "2");
      refuse(req, 503, "not_leader", message);
    }

    void timeUp() {
      if (ended()) {
        return;
      }
      if (body != null && !bodyDone) {
        refuse(
            req,
            408,
            "request_timeout",
            "the body did not arrive within " + limits.requestTimeoutMs() + " ms");
      } else {
        busy("the request did not finish within " + limits.requestTimeoutMs() + " ms");
      }
    }

    void busy(String why) {
      req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
      refuse(req, 503, "busy", why + "; retry");
    }

    /** Runs the handler on the request's context once the review answered; failures answer 503. */
    <T> void on(Future<T> review, Handler<T> then) {
      review.onComplete(
          r ->
              context.runOnContext(
                  v -> {
                    if (ended()) {
                      return;
                    }
                    if (r.succeeded()) {
                      then.handle(r.result());
                    } else if (r.cause() instanceof ReviewCache.Saturated) {
                      busy("too many requests are waiting for a review");
                    } else if (r.cause() instanceof ReviewCache.Throttled) {
                      String source = source(req);
                      req.response()
                          .putHeader(
                              HttpHeaders.RETRY_AFTER,
                              Long.toString(failedAuthentications.retryAfterSeconds(source)));
                      refuse(
                          req,
                          429,
                          "too_many_failed_authentications",
                          "too many tokens from "
                              + source
                              + " were not accepted; retry later with a valid token");
                    } else {
                      // The API server's message stays in the log: callers may not be
                      // authenticated.
                      LOG.warn("outcome intake: review failed: {}", r.cause().toString());
                      req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
                      refuse(
                          req,
                          503,
                          "review_unavailable",
                          "could not review the caller with the API server; retry");
                    }
                  }));
    }

    boolean ended() {
      return req.response().ended() || req.response().closed();
    }

    void finish() {
      vertx.cancelTimer(timer);
      bytesInFlight.release(this);
    }

    /** Another source with fewer bytes needed this request's: it is answered 503, retry. */
    @Override
    public void yielded() {
      context.runOnContext(
          v -> {
            if (!ended()) {
              busy("the intake's request bytes went to a source holding fewer");
            }
          });
    }
  }

  private void refuse(HttpServerRequest req, int status, String code, String message) {
    if (status == 401) {
      req.response().putHeader("WWW-Authenticate", "Bearer");
    }
    send(req, status, new JsonObject().put("error", code).put("message", message));
  }

  private void send(HttpServerRequest req, int status, JsonObject body) {
    var response = req.response();
    if (response.ended() || response.closed()) {
      return;
    }
    metrics.request(status);
    boolean unread = !req.isEnded();
    if (unread) {
      // The rest of the body is not read: the connection cannot be reused.
      response.putHeader(HttpHeaders.CONNECTION, "close");
    }
    response
        .setStatusCode(status)
        .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
        .end(body.toBuffer())
        .onComplete(
            v -> {
              if (unread) {
                drain(req);
              }
            });
  }

  /**
   * Reads and drops what the client is still sending for a little while, then closes: closing with
   * unread bytes makes the kernel send a reset that can destroy the reply before the client reads
   * it (the client then sees no answer at all).
   */
  private void drain(HttpServerRequest req) {
    long[] dropped = {0};
    long closer = vertx.setTimer(DRAIN_MS, id -> req.connection().close());
    req.handler(
        chunk -> {
          dropped[0] += chunk.length();
          if (dropped[0] > limits.maxBodyBytes()) {
            vertx.cancelTimer(closer);
            req.connection().close();
          }
        });
    req.endHandler(
        v -> {
          vertx.cancelTimer(closer);
          req.connection().close();
        });
    req.exceptionHandler(e -> {});
    if (req.isEnded()) {
      vertx.cancelTimer(closer);
      req.connection().close();
    } else {
      req.resume();
    }
  }

  private String tooLarge() {
    return "the body is larger than " + limits.maxBodyBytes() + " bytes; send smaller batches";
  }

  /** The caller's IP address: what failed authentications are counted by. */
  static String source(HttpServerRequest req) {
    var address = req.remoteAddress();
    return address == null || address.hostAddress() == null ? "" : address.hostAddress();
  }

  static String bearer(String header) {
    if (header == null || header.length() <= 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return null;
    }
    String token = header.substring(7).trim();
    return token.isEmpty() ? null : token;
  }

  static OutcomeParser.Format format(String contentType) {
    if (contentType == null) {
      return null;
    }
    int semi = contentType.indexOf(';');
    String type =
        (semi < 0 ? contentType : contentType.substring(0, semi))
            .trim()
            .toLowerCase(java.util.Locale.ROOT);
    return switch (type) {
      case "application/json" -> OutcomeParser.Format.JSON_ARRAY;
      case "application/x-ndjson", "application/jsonl", "application/jsonlines" ->
          OutcomeParser.Format.NDJSON;
      default -> null;
    };
  }

  private static long contentLength(String header) {
    try {
      return header == null ? -1 : Long.parseLong(header.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
