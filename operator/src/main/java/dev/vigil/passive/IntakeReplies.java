package dev.vigil.passive;

import dev.vigil.security.ReviewCache;
import dev.vigil.security.Reviews;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The intake's answers: a JSON body with the status counted, and a body not read drained before its
 * connection (HTTP/1.1) or stream (HTTP/2) is stopped.
 */
final class IntakeReplies {
  private static final Logger LOG = LoggerFactory.getLogger(OutcomeIntake.class);

  /** How long a connection answered before its body was read may drain before it is closed. */
  private static final long DRAIN_MS = 1_000;

  /**
   * At least this much of an unread body is dropped before the connection closes, however small the
   * body limit: a close with the client's bytes still unread resets the connection, and the client
   * then never sees the 413 it was sent.
   */
  private static final long DRAIN_MIN_BYTES = 1 << 20;

  /** HTTP/2's error code {@code NO_ERROR} (RFC 9113 section 7). */
  private static final long NO_ERROR = 0;

  private final Vertx vertx;
  private final IntakeLimits limits;
  private final IntakeMetrics metrics;

  IntakeReplies(Vertx vertx, IntakeLimits limits, IntakeMetrics metrics) {
    this.vertx = vertx;
    this.limits = limits;
    this.metrics = metrics;
  }

  /**
   * The answer to a batch that was read: 200 when any item was accepted (or there were none), else
   * 429 when the pool's queue was full, else 422; each rejected item with its index and why.
   */
  void batch(HttpServerRequest req, int items, int accepted, List<Rejection> rejections) {
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

  /** 503 with Retry-After: the intake is short of something; {@code why} says what. */
  void busy(HttpServerRequest req, String why) {
    req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
    refuse(req, 503, "busy", why + "; retry");
  }

  /**
   * A review did not answer: too many waiting (503), the source's failed authentications spent
   * (429), or the API server failed (503; its message stays in the log: callers may not be
   * authenticated).
   */
  void reviewFailed(HttpServerRequest req, Throwable cause, Reviews reviews) {
    if (cause instanceof ReviewCache.Saturated) {
      busy(req, "too many requests are waiting for a review");
    } else if (cause instanceof ReviewCache.Throttled) {
      String source = OutcomeIntake.source(req);
      req.response()
          .putHeader(HttpHeaders.RETRY_AFTER, Long.toString(reviews.retryAfterSeconds(source)));
      refuse(
          req,
          429,
          "too_many_failed_authentications",
          "too many tokens from " + source + " were not accepted; retry later with a valid token");
    } else {
      LOG.warn("outcome intake: review failed: {}", cause.toString());
      req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
      refuse(
          req, 503, "review_unavailable", "could not review the caller with the API server; retry");
    }
  }

  /** An error answer: {@code {"error": code, "message": message}}. */
  void refuse(HttpServerRequest req, int status, String code, String message) {
    if (status == 401) {
      req.response().putHeader("WWW-Authenticate", "Bearer");
    }
    send(req, status, new JsonObject().put("error", code).put("message", message));
  }

  void send(HttpServerRequest req, int status, JsonObject body) {
    var response = req.response();
    if (response.ended() || response.closed()) {
      return;
    }
    metrics.request(status);
    end(req, status, "application/json", body.toBuffer());
  }

  /**
   * Ends the response; a body the client is still sending is then drained ({@link #drain}).
   * HTTP/1.1 closes the connection after it (the rest of the body is not read, so it cannot be
   * reused); HTTP/2 (ALPN, since the OTLP receiver shares the port) ends only this stream: the
   * connection and the caller's other requests on it stay.
   */
  void end(HttpServerRequest req, int status, String contentType, Buffer body) {
    boolean unread = !req.isEnded();
    if (unread && req.version() != HttpVersion.HTTP_2) {
      req.response().putHeader(HttpHeaders.CONNECTION, "close");
    }
    req.response()
        .setStatusCode(status)
        .putHeader(HttpHeaders.CONTENT_TYPE, contentType)
        .end(body)
        .onComplete(
            v -> {
              if (unread) {
                drain(req);
              }
            });
  }

  /**
   * Reads and drops what the client is still sending of a body not wanted, for up to {@link
   * #DRAIN_MS} and the body limit, then stops it. HTTP/1.1: by closing the connection (closing with
   * unread bytes makes the kernel send a reset that can destroy the reply before the client reads
   * it, and the client then sees no answer at all). HTTP/2: by resetting the stream with {@code
   * NO_ERROR}, as RFC 9113 section 8.1 lets a server that answered before the whole request ask the
   * client to stop sending. Left unread, an HTTP/2 stream's bytes would hold the connection's
   * flow-control window, and every other request on the connection would wait behind them.
   */
  void drain(HttpServerRequest req) {
    boolean h2 = req.version() == HttpVersion.HTTP_2;
    Runnable stop = h2 ? () -> req.response().reset(NO_ERROR) : () -> req.connection().close();
    Runnable ended = h2 ? () -> {} : stop; // a stream whose body ended is done; a connection closes
    long[] dropped = {0};
    long bound = Math.max(limits.maxBodyBytes(), DRAIN_MIN_BYTES);
    long stopper = vertx.setTimer(DRAIN_MS, id -> stop.run());
    req.handler(
        chunk -> {
          dropped[0] += chunk.length();
          if (dropped[0] > bound) {
            vertx.cancelTimer(stopper);
            stop.run();
          }
        });
    req.endHandler(
        v -> {
          vertx.cancelTimer(stopper);
          ended.run();
        });
    req.exceptionHandler(e -> {});
    if (req.isEnded()) {
      vertx.cancelTimer(stopper);
      ended.run();
    } else {
      req.resume();
    }
  }

  String tooLarge() {
    return "the body is larger than " + limits.maxBodyBytes() + " bytes; send smaller batches";
  }
}
