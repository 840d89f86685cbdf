package dev.vigil.peer;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;

/** The error answers of a peer endpoint, the same for every one of them. */
public final class PeerReplies {
  /** The most bytes of an unread body drained before its connection is closed. */
  private static final long MAX_DRAIN = 8L << 20;

  private PeerReplies() {}

  /**
   * An error answer. A body not read yet is read and dropped (at most {@value #MAX_DRAIN} bytes,
   * for at most a second) before the connection closes: closing on unread bytes makes the kernel
   * reset the connection, which can destroy the answer before the caller reads it.
   */
  public static void refuse(HttpServerRequest req, int status, String message) {
    if (status == 401) {
      req.response().putHeader("WWW-Authenticate", "Bearer");
    }
    boolean unread = !req.isEnded();
    if (unread) {
      req.response().putHeader(HttpHeaders.CONNECTION, "close");
    }
    req.response()
        .setStatusCode(status)
        .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
        .end(new JsonObject().put("message", message).toBuffer());
    if (unread) {
      long[] dropped = {0};
      Vertx vertx = Vertx.currentContext().owner();
      long closer = vertx.setTimer(1_000, id -> req.connection().close());
      req.handler(
          chunk -> {
            dropped[0] += chunk.length();
            if (dropped[0] > MAX_DRAIN) {
              vertx.cancelTimer(closer);
              req.connection().close();
            }
          });
      req.endHandler(v -> vertx.cancelTimer(closer));
      req.resume();
    }
  }
}
