package dev.vigil.passive;

import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The passive outcome intake (DESIGN §4): {@code POST /v1/outcomes} on its own port takes a batch
 * of real-request outcomes from proxies and sidecars and feeds each pool's runtime, one hop per
 * pool and batch.
 *
 * <p>Every request: a bearer token (TokenReview), the body read under a byte limit and a deadline,
 * the batch parsed and checked as a whole, {@code create backendpools/outcomes} allowed for every
 * pool it names (SubjectAccessReview), then per pool a bounded queue and the runtime. Reviews run
 * on a worker pool and are cached; nothing here blocks an event loop. A refused request changes
 * nothing; a processed one says per rejected item why. See {@link OutcomeParser} for the format.
 */
public final class OutcomeIntake {
  public static final String PATH = "/v1/outcomes";
  private static final Logger LOG = LoggerFactory.getLogger(OutcomeIntake.class);

  private final Vertx vertx;
  private final PoolRuntimes runtimes;
  private final IntakeLimits limits;
  private final IntakeMetrics metrics;
  private final OutcomeParser parser;
  private final PoolQueues queues;
  private final WorkerExecutor workers;
  private final Reviews reviews;
  private HttpServer server;

  public OutcomeIntake(
      Vertx vertx,
      PoolRuntimes runtimes,
      Reviewer reviewer,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock) {
    this.vertx = vertx;
    this.runtimes = runtimes;
    this.limits = limits;
    this.metrics = new IntakeMetrics(meters);
    this.parser = new OutcomeParser(limits, clock);
    this.queues = new PoolQueues(limits.queuePerPool());
    this.workers = vertx.createSharedWorkerExecutor("vigil-reviews", 4);
    this.reviews = new Reviews(reviewer, workers, limits, clock);
  }

  /** Listens on the port (0 = a free one); the future holds the bound port. */
  public Future<Integer> listen(String host, int port) {
    HttpServer s =
        vertx.createHttpServer(
            new HttpServerOptions()
                .setHost(host)
                .setPort(port)
                .setIdleTimeout((int) Math.max(1, limits.requestTimeoutMs() / 1000 * 6))
                .setIdleTimeoutUnit(java.util.concurrent.TimeUnit.SECONDS));
    s.requestHandler(this::handle);
    return s.listen()
        .map(
            bound -> {
              server = bound;
              LOG.info("outcome intake listening on {}:{}", host, bound.actualPort());
              return bound.actualPort();
            });
  }

  public Future<Void> close() {
    Future<Void> closing = server == null ? Future.succeededFuture() : server.close();
    return closing.eventually(workers::close);
  }

  private void handle(HttpServerRequest req) {
    if (!PATH.equals(req.path())) {
      refuse(req, 404, "not_found", "outcomes go to POST " + PATH);
      return;
    }
    if (req.method() != HttpMethod.POST) {
      req.response().putHeader(HttpHeaders.ALLOW, "POST");
      refuse(req, 405, "method_not_allowed", "use POST " + PATH);
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
    new Exchange(req, token, format, vertx.getOrCreateContext()).start();
  }

  /** One request, from its headers to its reply. Runs on the intake's event loop. */
  private final class Exchange {
    final HttpServerRequest req;
    final String token;
    final OutcomeParser.Format format;
    final Context context;
    Buffer body = Buffer.buffer();
    boolean bodyDone;
    long timer;

    Exchange(HttpServerRequest req, String token, OutcomeParser.Format format, Context context) {
      this.req = req;
      this.token = token;
      this.format = format;
      this.context = context;
    }

    void start() {
      timer =
          vertx.setTimer(
              limits.requestTimeoutMs(),
              id -> {
                if (!bodyDone) {
                  refuse(
                      req,
                      408,
                      "request_timeout",
                      "the body did not arrive within " + limits.requestTimeoutMs() + " ms");
                }
              });
      Future<Optional<Identity>> caller = reviews.authenticate(token);
      caller.onComplete(
          r -> {
            if (r.failed()) {
              unavailable(r.cause());
            } else if (r.result().isEmpty()) {
              refuse(req, 401, "unauthenticated", "the token is not valid (TokenReview)");
            } else if (bodyDone) {
              authorize(r.result().get());
            }
          });
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
            vertx.cancelTimer(timer);
            if (caller.succeeded() && caller.result().isPresent() && !ended()) {
              authorize(caller.result().get());
            }
          });
    }

    boolean ended() {
      return req.response().ended() || req.response().closed();
    }

    void authorize(Identity who) {
      if (body == null) {
        return; // already under way: the token and the body each finish once, in either order
      }
      OutcomeParser.Parsed batch;
      try {
        byte[] bytes = body.getBytes();
        body = null;
        batch = parser.parse(bytes, bytes.length, format);
      } catch (BadBatch e) {
        refuse(req, e.status(), e.code(), e.getMessage());
        return;
      }
      metrics.received(batch.items());
      Map<PoolKey, List<Outcome>> byPool = new LinkedHashMap<>();
      for (Outcome o : batch.outcomes()) {
        byPool.computeIfAbsent(o.pool(), k -> new ArrayList<>()).add(o);
      }
      List<PoolKey> pools = List.copyOf(byPool.keySet());
      List<Future<Boolean>> checks = new ArrayList<>(pools.size());
      for (PoolKey pool : pools) {
        checks.add(reviews.mayReport(who, pool));
      }
      Future.all(checks)
          .onComplete(
              r ->
                  context.runOnContext(
                      v -> {
                        if (r.failed()) {
                          unavailable(r.cause());
                          return;
                        }
                        List<String> denied = new ArrayList<>();
                        for (int i = 0; i < pools.size(); i++) {
                          if (!checks.get(i).result()) {
                            denied.add(pools.get(i).toString());
                          }
                        }
                        if (!denied.isEmpty()) {
                          refuse(
                              req,
                              403,
                              "forbidden",
                              who.username()
                                  + " may not create backendpools/outcomes for pool "
                                  + String.join(", ", denied));
                          return;
                        }
                        apply(batch, byPool);
                      }));
    }

    void apply(OutcomeParser.Parsed batch, Map<PoolKey, List<Outcome>> byPool) {
      List<Rejection> rejections = new ArrayList<>(batch.rejections());
      List<Applying> work = new ArrayList<>(byPool.size());
      for (Map.Entry<PoolKey, List<Outcome>> e : byPool.entrySet()) {
        PoolKey pool = e.getKey();
        List<Outcome> items = e.getValue();
        Optional<PoolRuntime> runtime = runtimes.get(pool);
        if (runtime.isEmpty()) {
          for (Outcome o : items) {
            rejections.add(
                new Rejection(
                    o.index(),
                    RejectReason.UNKNOWN_POOL,
                    "no BackendPool " + pool + " is running here"));
          }
          continue;
        }
        int granted = queues.reserve(pool, items.size());
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
          continue;
        }
        List<Outcome> taken = items.subList(0, granted);
        List<OutcomeReport> reports = new ArrayList<>(granted);
        for (Outcome o : taken) {
          reports.add(o.report());
        }
        Future<AppliedOutcomes> applied = runtime.get().onOutcomes(reports);
        applied.onComplete(r -> queues.release(pool, granted));
        work.add(new Applying(pool, taken, applied));
      }
      Future.join(work.stream().map(Applying::applied).toList())
          .onComplete(
              r ->
                  context.runOnContext(
                      v -> {
                        int accepted = 0;
                        for (Applying a : work) {
                          accepted += account(a, rejections);
                        }
                        reply(batch.items(), accepted, rejections);
                      }));
    }

    /** Counts one pool's share and notes its unknown backends; returns how many were taken. */
    int account(Applying a, List<Rejection> rejections) {
      if (a.applied().failed()) {
        LOG.warn("outcomes for pool {} failed: {}", a.pool(), a.applied().cause().toString());
        for (Outcome o : a.taken()) {
          rejections.add(
              new Rejection(o.index(), RejectReason.UNKNOWN_POOL, "pool " + a.pool() + " closed"));
        }
        return 0;
      }
      AppliedOutcomes applied = a.applied().result();
      applied.unknown().stream()
          .forEach(
              i ->
                  rejections.add(
                      new Rejection(
                          a.taken().get(i).index(),
                          RejectReason.UNKNOWN_BACKEND,
                          "pool " + a.pool() + " has no backend at " + a.taken().get(i).ip())));
      for (AppliedOutcomes.Decided d : applied.decisions()) {
        metrics.decided(a.pool(), d.backend(), d.decision().kind());
      }
      int accepted = a.taken().size() - applied.unknown().cardinality();
      metrics.accepted(a.pool(), accepted);
      return accepted;
    }

    void reply(int items, int accepted, List<Rejection> rejections) {
      List<Rejection> sorted = rejections;
      sorted.sort(Comparator.comparingInt(Rejection::index));
      JsonArray errors = new JsonArray();
      boolean full = false;
      for (Rejection r : sorted) {
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
              .put("rejected", sorted.size())
              .put("errors", errors));
    }

    void unavailable(Throwable cause) {
      LOG.warn("outcome intake: review failed: {}", cause.toString());
      refuse(
          req,
          503,
          "review_unavailable",
          "could not review the caller with the API server; retry (" + cause.getMessage() + ")");
    }
  }

  /** One pool's share of a batch, on its way through the pool's runtime. */
  private record Applying(PoolKey pool, List<Outcome> taken, Future<AppliedOutcomes> applied) {}

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
                req.connection().close();
              }
            });
  }

  private String tooLarge() {
    return "the body is larger than " + limits.maxBodyBytes() + " bytes; send smaller batches";
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
