package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import dev.vigil.probe.transport.ProbeConnection;
import dev.vigil.probe.transport.ProbeDeadline;
import dev.vigil.probe.transport.TransportFailure;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * One HTTP/1.1 (or WebSocket) probe of {@link HttpProber}: connection (a kept one, or fresh),
 * request, parse, verdict, then release of the connection. Runs on the context that started it.
 */
final class Http1Exchange implements ProbeConnection.Receiver {
  private final Vertx vertx;
  private final ProbeConnection.Connector tlsConnector;
  private final ProbeConnection.Connector plainConnector;
  private final KeptConnections idle;
  private final PatternCosts patterns;
  private final ProbeTarget target;
  private final CheckSpec spec;
  final Promise<ProbeResult> promise = Promise.promise();
  private final long start = System.nanoTime();
  private final boolean collectBody;
  private final boolean websocket;
  private final String websocketKey;
  private io.netty.util.concurrent.ScheduledFuture<?> deadline;
  private ProbeConnection connection;
  private HttpResponseParser parser;
  private boolean reused;
  private boolean retried;
  private boolean verdictGiven;
  private boolean delivered;
  private ProbeResult result;
  private boolean released;
  private long received;

  Http1Exchange(HttpProber prober, ProbeTarget target, CheckSpec spec) {
    this.vertx = prober.vertx;
    this.tlsConnector = prober.tlsConnector;
    this.plainConnector = prober.plainConnector;
    this.idle = prober.idle;
    this.patterns = prober.patterns;
    this.target = target;
    this.spec = spec;
    this.websocket = spec.protocol() == ProbeProtocol.WEBSOCKET;
    this.collectBody = !websocket && spec.http().bodyMatch() != null;
    this.websocketKey = websocket ? WebSocketHandshake.newKey() : null;
  }

  void start() {
    deadline = ProbeDeadline.schedule(vertx, spec.timeout().toMillis(), this::onDeadline);
    ProbeConnection kept = spec.reuseConnection() ? idle.take(target, spec) : null;
    if (kept != null) {
      reused = true;
      attach(kept);
    } else {
      connect();
    }
  }

  void connect() {
    reused = false;
    long left = spec.timeout().toMillis() - ProbeResult.elapsedMs(start);
    ProbeConnection.Connector connector = spec.usesTls() ? tlsConnector : plainConnector;
    connector.connect(
        target,
        spec,
        (int) Math.max(1, left),
        (connection, failure) -> {
          if (released) {
            if (failure == null) {
              connection.close();
            }
          } else if (failure != null) {
            verdict(TransportFailure.classify(failure, ProbeResult.elapsedMs(start)));
            release(false);
          } else {
            attach(connection);
          }
        });
  }

  void attach(ProbeConnection s) {
    connection = s;
    parser =
        new HttpResponseParser(
            !websocket && "HEAD".equals(spec.http().method()),
            collectBody,
            websocket ? WebSocketHandshake.HEADERS : spec.http().headerMatch());
    received = 0;
    s.receive(this);
    s.write(Http1Request.bytes(target, spec, websocketKey));
  }

  @Override
  public void onData(byte[] bytes, int offset, int length) {
    if (released) {
      return;
    }
    received += length;
    boolean headBefore = parser.headComplete();
    parser.feed(bytes, offset, length);
    if (parser.isMalformed()) {
      verdict(
          ProbeResult.fail(
              Reason.MALFORMED_RESPONSE, parser.problem(), ProbeResult.elapsedMs(start)));
      release(false);
      return;
    }
    if (!verdictGiven && parser.headComplete()) {
      if (!headBefore) {
        headVerdict();
      }
      if (!verdictGiven && collectBody && (parser.complete() || parser.bodyLimitReached())) {
        verdict(bodyVerdict());
      }
    }
    if (verdictGiven) {
      if (parser.complete()) {
        release(spec.reuseConnection() && parser.reusable(), true);
      } else if (!spec.reuseConnection() || parser.bodyLimitReached()) {
        release(false);
      }
      // otherwise: reuse, drain the rest of a small body until the deadline
    }
    deliver();
  }

  /** At the end of the head: the status decides first, then headerMatch; bodyMatch waits. */
  void headVerdict() {
    if (websocket) {
      verdict(websocketVerdict());
      return;
    }
    if (!statusPasses()) {
      verdict(statusVerdict());
      return;
    }
    if (!spec.http().headerMatch().isEmpty()) {
      ProbeResult mismatch = headerMismatch();
      if (mismatch != null) {
        verdict(mismatch);
        return;
      }
    }
    if (!collectBody) {
      verdict(statusVerdict());
    }
  }

  /** RFC 6455 section 4.1: 101, Upgrade: websocket, and the accept value of our key. */
  ProbeResult websocketVerdict() {
    int code = parser.statusCode();
    long latency = ProbeResult.elapsedMs(start);
    if (code != 101) {
      return ProbeResult.fail(Reason.STATUS, "status " + code + ", not 101", latency)
          .withStatusCode(code);
    }
    String detail = null;
    List<String> accept = parser.headerValues("Sec-WebSocket-Accept");
    if (parser.headerValues("Upgrade").stream().noneMatch(v -> v.equalsIgnoreCase("websocket"))) {
      detail = "101 without Upgrade: websocket";
    } else if (accept.isEmpty()) {
      detail = "101 without Sec-WebSocket-Accept";
    } else if (!accept.get(0).equals(WebSocketHandshake.expectedAccept(websocketKey))) {
      detail =
          "Sec-WebSocket-Accept "
              + StatusLineClassifier.excerpt(accept.get(0))
              + " does not answer the key";
    }
    if (detail != null) {
      return ProbeResult.fail(Reason.WEBSOCKET_HANDSHAKE, detail, latency).withStatusCode(101);
    }
    connection.write(WebSocketHandshake.CLOSE_FRAME);
    return ProbeResult.httpStatus(true, 101, latency);
  }

  /** The first headerMatch entry the response fails, as a verdict; null when all hold. */
  ProbeResult headerMismatch() {
    String detail =
        HeaderCheck.firstMismatch(spec.http().headerMatch(), parser::headerValues, patterns);
    return detail == null
        ? null
        : ProbeResult.fail(Reason.HEADER_MISMATCH, detail, ProbeResult.elapsedMs(start))
            .withStatusCode(parser.statusCode());
  }

  boolean statusPasses() {
    return spec.http().expectedStatuses().contains(parser.statusCode());
  }

  ProbeResult statusVerdict() {
    CheckSpec.Http http = spec.http();
    return StatusLineClassifier.verdict(
        http.expectedStatuses(),
        http.failFastStatuses(),
        parser.statusCode(),
        ProbeResult.elapsedMs(start));
  }

  ProbeResult bodyVerdict() {
    int code = parser.statusCode();
    PatternCosts.Found found = patterns.find(spec.http().bodyMatch(), parser.bodyText());
    if (found.found()) {
      return ProbeResult.httpStatus(true, code, ProbeResult.elapsedMs(start));
    }
    return ProbeResult.fail(
            Reason.BODY_MISMATCH,
            found.refused()
                ? "bodyMatch " + found.refusal()
                : "body does not match" + (parser.bodyTruncated() ? " (first 64 KiB)" : ""),
            ProbeResult.elapsedMs(start))
        .withStatusCode(code);
  }

  @Override
  public void onError(Throwable t) {
    if (released) {
      return;
    }
    if (retryOnFresh()) {
      return;
    }
    verdict(TransportFailure.classify(t, ProbeResult.elapsedMs(start)));
    release(false);
  }

  @Override
  public void onClose() {
    if (released) {
      return;
    }
    if (retryOnFresh()) {
      return;
    }
    parser.endOfInput();
    if (!verdictGiven) {
      if (parser.headComplete() && collectBody && parser.complete()) {
        verdict(bodyVerdict());
      } else if (parser.partialStatusLine()
          && StatusLineClassifier.parseCode(parser.partialLine()) < 0) {
        verdict(
            ProbeResult.fail(
                Reason.MALFORMED_RESPONSE,
                "malformed status line: " + StatusLineClassifier.excerpt(parser.partialLine()),
                ProbeResult.elapsedMs(start)));
      } else if (received == 0) {
        verdict(TransportFailure.closed(ProbeResult.elapsedMs(start)));
      } else {
        verdict(
            ProbeResult.fail(
                Reason.CONNECTION_CLOSED,
                "connection closed mid-response",
                ProbeResult.elapsedMs(start)));
      }
    }
    connection = null;
    release(false);
  }

  /** A reused connection that died before any answer: once, try a fresh one. */
  boolean retryOnFresh() {
    if (!reused || retried || received > 0 || verdictGiven) {
      return false;
    }
    retried = true;
    ProbeConnection old = connection;
    connection = null;
    old.receive(null);
    old.close();
    connect();
    return true;
  }

  void onDeadline() {
    deadline = null;
    if (!verdictGiven) {
      verdict(ProbeResult.timeout(spec.timeout().toMillis()));
    }
    release(false);
  }

  /** Records the verdict; {@link #deliver()} hands it out once the connection is settled. */
  void verdict(ProbeResult result) {
    if (!verdictGiven) {
      verdictGiven = true;
      this.result = result;
    }
  }

  void deliver() {
    if (result != null && !delivered) {
      delivered = true;
      promise.complete(result);
    }
  }

  /** Ends the exchange: keeps the connection for reuse, or closes it. */
  void release(boolean keep) {
    release(keep, false);
  }

  /**
   * Ends the exchange: keeps the connection for reuse, or closes it; after a whole response ({@code
   * answered}) the peer closes next, so the connection may wait for that ({@link
   * ProbeConnection#finish}).
   */
  void release(boolean keep, boolean answered) {
    if (released) {
      return;
    }
    released = true;
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
    ProbeConnection s = connection;
    connection = null;
    if (s == null) {
      deliver();
      return;
    }
    if (keep) {
      idle.keep(target, s, spec);
    } else {
      s.receive(null);
      if (answered) {
        s.finish();
      } else {
        s.close();
      }
    }
    deliver();
  }
}
