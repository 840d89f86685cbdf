package dev.vigil.peer;

import dev.vigil.security.RequestHeaders;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;

/**
 * The door of a replica-to-replica endpoint on the outcome port (a voter's questions, forwarded
 * outcomes): {@code POST} only, a bearer token, a declared length within the endpoint's bound, and
 * a caller {@link PeerAuth} accepts as another replica of this installation, before a byte of the
 * body is read. Refusals are {@link PeerReplies}: 405, 401, 411, 413, 503 (the review failed; retry
 * after a second) and 403.
 *
 * @param path the endpoint's path, for the 405's advice
 * @param maxBodyBytes the largest body the endpoint takes
 * @param body what one body is, for the 413's message ("a question")
 * @param verb what a peer does there, for the 403's message ("ask")
 */
public record PeerGate(PeerAuth auth, String path, long maxBodyBytes, String body, String verb) {

  /** Hands {@code req} (paused, its body unread) to {@code admitted} once the caller passed. */
  public void admit(HttpServerRequest req, Handler<HttpServerRequest> admitted) {
    req.pause();
    if (req.method() != HttpMethod.POST) {
      req.response().putHeader(HttpHeaders.ALLOW, "POST");
      PeerReplies.refuse(req, 405, "use POST " + path);
      return;
    }
    String token = RequestHeaders.bearer(req.getHeader(HttpHeaders.AUTHORIZATION));
    if (token == null) {
      PeerReplies.refuse(
          req, 401, "send Authorization: Bearer <this installation's ServiceAccount token>");
      return;
    }
    long length = RequestHeaders.contentLength(req.getHeader(HttpHeaders.CONTENT_LENGTH));
    if (length < 0) {
      PeerReplies.refuse(req, 411, "send Content-Length");
      return;
    }
    if (length > maxBodyBytes) {
      PeerReplies.refuse(req, 413, body + " is at most " + maxBodyBytes + " bytes");
      return;
    }
    String source = req.remoteAddress() == null ? "" : req.remoteAddress().hostAddress();
    auth.isPeer(token, source == null ? "" : source)
        .onComplete(
            peer -> {
              if (peer.failed()) {
                req.response().putHeader(HttpHeaders.RETRY_AFTER, "1");
                PeerReplies.refuse(req, 503, "could not review the token now");
              } else if (!peer.result()) {
                PeerReplies.refuse(
                    req, 403, "only another replica of this installation may " + verb);
              } else {
                admitted.handle(req);
              }
            });
  }
}
