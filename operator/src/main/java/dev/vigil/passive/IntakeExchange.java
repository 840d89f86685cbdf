package dev.vigil.passive;

import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviews;
import dev.vigil.security.TokenBuckets;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request to the {@link OutcomeIntake}, from its headers to its reply: the token's review, the
 * caller's rate, the permission on the pool, the pool's presence, a share of the bytes in flight,
 * the body, the batch's parse and its hop to the pool's runtime. Runs on the intake's event loop;
 * the reviews' answers come back to it ({@link #on}).
 */
final class IntakeExchange implements ByteShares.Holder {
  private static final Logger LOG = LoggerFactory.getLogger(OutcomeIntake.class);

  /**
   * What every exchange of one intake shares.
   *
   * @param clientCertificates the CAs whose client certificates identify callers, or null: the port
   *     asks for none
   */
  record Shared(
      Vertx vertx,
      OutcomeRoute route,
      IntakeLimits limits,
      IntakeMetrics metrics,
      OutcomeParser parser,
      PoolQueues queues,
      Reviews reviews,
      TokenBuckets rates,
      BooleanSupplier runsPools,
      ByteShares bytesInFlight,
      IntakeReplies replies,
      ClientCertificates clientCertificates) {

    /** What the connection's client certificate says (nothing when the port asks for none). */
    ClientCertificates.Verdict certificate(HttpConnection connection) {
      return clientCertificates == null || connection == null
          ? ClientCertificates.Verdict.NONE
          : clientCertificates.verify(connection.sslSession());
    }
  }

  private final Shared shared;
  private final HttpServerRequest req;
  private final PoolKey pool;
  private final ClientCertificates.Verdict certificate;
  private final String token;
  private final String idempotencyKey;
  private final OutcomeParser.Format format;
  private final long declared;
  private final Context context;
  private Buffer body;
  private boolean bodyDone;
  private Identity caller;
  private long timer;

  /**
   * Once a batch without a key was handed to its route: the answer the request's deadline gives
   * then ({@link #timeUp}).
   */
  private Runnable unconfirmedAtDeadline;

  IntakeExchange(
      Shared shared,
      HttpServerRequest req,
      PoolKey pool,
      ClientCertificates.Verdict certificate,
      String token,
      String idempotencyKey,
      OutcomeParser.Format format,
      long declared,
      Context context) {
    this.shared = shared;
    this.req = req;
    this.pool = pool;
    this.certificate = certificate;
    this.token = token;
    this.idempotencyKey = idempotencyKey;
    this.format = format;
    this.declared = declared;
    this.context = context;
  }

  void start() {
    timer = shared.vertx().setTimer(shared.limits().requestTimeoutMs(), id -> timeUp());
    req.response().endHandler(v -> finish());
    req.response().closeHandler(v -> finish());
    on(
        shared.reviews().authenticate(certificate, token, OutcomeIntake.source(req)),
        who -> {
          if (who.isEmpty()) {
            shared
                .replies()
                .refuse(
                    req,
                    401,
                    "unauthenticated",
                    "the token was not accepted: send a ServiceAccount token projected for Vigil's"
                        + " audience"
                        + certificate.refusalNote());
          } else {
            admit(who.get());
          }
        });
  }

  /** An authenticated caller: rate, the permission, then the pool's runtime. */
  void admit(Identity who) {
    caller = who;
    if (!shared.rates().tryAcquire(who.username())) {
      req.response()
          .putHeader(
              HttpHeaders.RETRY_AFTER,
              Long.toString(shared.rates().retryAfterSeconds(who.username())));
      shared
          .replies()
          .refuse(
              req,
              429,
              "rate_limited",
              who.username()
                  + " sends more than "
                  + shared.limits().requestsPerSecond()
                  + " requests/s; send fewer, larger batches");
      return;
    }
    on(
        shared.reviews().allows(who, Permission.reportOutcomes(pool.namespace(), pool.name())),
        allowed -> {
          OutcomeRoute.Location where = allowed ? shared.route().locate(pool) : null;
          if (!allowed) {
            forbidden(who);
          } else if (!shared.route().takes(where)) {
            notHere(who, where);
          } else {
            read();
          }
        });
  }

  /**
   * One answer for "not allowed" and "no such pool here" (issue 31, item 7 of the table): the same
   * status and body, so a caller cannot tell which pools exist in namespaces it may not report for.
   */
  void forbidden(Identity who) {
    shared
        .replies()
        .refuse(
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
    long want = declared >= 0 ? declared : shared.limits().maxBodyBytes();
    if (!shared.bytesInFlight().reserve(this, OutcomeIntake.source(req), want)) {
      busy("the intake holds its limit of request bytes");
      return;
    }
    body = Buffer.buffer((int) Math.min(want, 64 * 1024));
    req.handler(
        chunk -> {
          if (ended()) {
            return;
          }
          if (body.length() + chunk.length() > shared.limits().maxBodyBytes()) {
            shared.replies().refuse(req, 413, "body_too_large", shared.replies().tooLarge());
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

  /** Parses the body read, then hands the batch's outcomes to the pool's route. */
  void apply() {
    OutcomeParser.Parsed batch;
    IdempotencyKey key;
    try {
      byte[] bytes = body.getBytes();
      body = null;
      batch = shared.parser().parse(bytes, bytes.length, format, pool);
      key =
          idempotencyKey == null
              ? null
              : IdempotencyKey.of(idempotencyKey, caller.username(), pool, bytes);
    } catch (BadBatch e) {
      shared.replies().refuse(req, e.status(), e.code(), e.getMessage());
      return;
    }
    shared.metrics().received(batch.items());
    List<Rejection> rejections = new ArrayList<>(batch.rejections());
    List<ParsedOutcome> items = batch.outcomes();
    int granted = reserve(items, rejections, key != null);
    if (granted == 0) {
      shared.replies().batch(req, batch.items(), 0, rejections);
    } else {
      hand(batch.items(), items.subList(0, granted), rejections, key);
    }
  }

  /**
   * Reserves the pool's queue for as many of the items as it has room for; the rest are rejected
   * ({@code queue_full}). Returns how many were granted, from the front. A batch under an
   * idempotency key is taken {@code whole} or not at all: its remembered answer must be the whole
   * batch's, whatever the queue holds when the reporter sends it again.
   */
  private int reserve(List<ParsedOutcome> items, List<Rejection> rejections, boolean whole) {
    int granted = items.isEmpty() ? 0 : shared.queues().reserve(pool, items.size());
    if (whole && granted > 0 && granted < items.size()) {
      shared.queues().release(pool, granted);
      granted = 0;
    }
    if (granted < items.size()) {
      shared.metrics().overflow(pool, items.size() - granted);
      for (ParsedOutcome o : items.subList(granted, items.size())) {
        rejections.add(
            new Rejection(
                o.index(),
                RejectReason.QUEUE_FULL,
                "pool "
                    + pool
                    + " has "
                    + shared.limits().queuePerPool()
                    + " outcomes queued; retry"));
      }
    }
    return granted;
  }

  /**
   * Hands the granted outcomes to the pool's route (its runtime here, or its owner), and answers
   * when they were applied.
   */
  private void hand(
      int items, List<ParsedOutcome> taken, List<Rejection> rejections, IdempotencyKey key) {
    List<OutcomeReport> reports = new ArrayList<>(taken.size());
    for (ParsedOutcome o : taken) {
      reports.add(o.report());
    }
    if (key == null) {
      unconfirmedAtDeadline =
          () -> {
            List<Rejection> all = new ArrayList<>(rejections);
            for (ParsedOutcome o : taken) {
              all.add(
                  new Rejection(
                      o.index(),
                      RejectReason.UNCONFIRMED,
                      "the request's deadline passed while pool "
                          + pool
                          + " was applying it: it may be applied; do not send it again"));
            }
            shared.replies().batch(req, items, 0, all);
          };
    }
    Future<AppliedOutcomes> applied = shared.route().deliver(pool, reports, key);
    applied.onComplete(
        r ->
            context.runOnContext(
                v -> {
                  shared.queues().release(pool, taken.size());
                  if (r.cause() instanceof OutcomeRoute.NotDelivered) {
                    notDelivered(r.cause().getMessage());
                    return;
                  }
                  if (r.cause() instanceof OutcomeRoute.KeyReused) {
                    shared
                        .replies()
                        .refuse(req, 422, "idempotency_key_reused", r.cause().getMessage());
                    return;
                  }
                  shared
                      .replies()
                      .batch(
                          req,
                          items,
                          account(taken, r.result(), r.cause(), rejections),
                          rejections);
                }));
  }

  /** Counts the pool's share and notes its unknown backends; returns how many were taken. */
  int account(
      List<ParsedOutcome> taken,
      AppliedOutcomes applied,
      Throwable failed,
      List<Rejection> rejections) {
    if (failed instanceof OutcomeRoute.Unconfirmed) {
      for (ParsedOutcome o : taken) {
        rejections.add(new Rejection(o.index(), RejectReason.UNCONFIRMED, failed.getMessage()));
      }
      return 0;
    }
    if (failed != null) {
      LOG.warn("outcomes for pool {} failed: {}", pool, failed.toString());
      for (ParsedOutcome o : taken) {
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
      shared.metrics().decided(pool, d.decision().kind());
    }
    int accepted = taken.size() - applied.unknown().cardinality();
    shared.metrics().accepted(pool, accepted);
    return accepted;
  }

  /**
   * An authorized caller's pool does not run here and no route to it is known: a standby whose
   * route does not forward says retry (its retry may reach the leader; a standby with peers
   * forwards instead, so this is a route without them); a replica that can tell the pool does not
   * exist, or the leader, answers as for a caller that may not report ({@link #forbidden}).
   */
  void notHere(Identity who, OutcomeRoute.Location where) {
    if (where.kind() != OutcomeRoute.Location.Kind.NONE && !shared.runsPools().getAsBoolean()) {
      req.response().putHeader(HttpHeaders.RETRY_AFTER, "2");
      shared
          .replies()
          .refuse(
              req,
              503,
              "not_leader",
              "this replica does not run BackendPool " + pool + " now (it stands by); retry");
    } else {
      forbidden(who);
    }
  }

  /**
   * The route found no replica to apply the batch within its deadline (the pool is moving, or its
   * owner died and its pools are not reassigned yet): nothing was applied, the reporter retries.
   */
  void notDelivered(String why) {
    req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
    shared.replies().refuse(req, 503, "not_delivered", why + "; nothing was applied, retry");
  }

  /**
   * The request's deadline. A batch already handed to its route may be applied after it: answered
   * 503, a reporter without a key would send it again and it would count twice, so it is answered
   * {@code unconfirmed} instead (not to be sent again). A keyed batch is answered 503: its retry is
   * answered from the owner's memory of the key.
   */
  void timeUp() {
    if (ended()) {
      return;
    }
    if (unconfirmedAtDeadline != null) {
      unconfirmedAtDeadline.run();
      return;
    }
    if (body != null && !bodyDone) {
      shared
          .replies()
          .refuse(
              req,
              408,
              "request_timeout",
              "the body did not arrive within " + shared.limits().requestTimeoutMs() + " ms");
    } else {
      busy("the request did not finish within " + shared.limits().requestTimeoutMs() + " ms");
    }
  }

  void busy(String why) {
    shared.replies().busy(req, why);
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
                  } else {
                    shared.replies().reviewFailed(req, r.cause(), shared.reviews());
                  }
                }));
  }

  boolean ended() {
    return req.response().ended() || req.response().closed();
  }

  void finish() {
    shared.vertx().cancelTimer(timer);
    shared.bytesInFlight().release(this);
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
