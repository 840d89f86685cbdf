package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.transport.ProbeConnection;
import dev.vigil.probe.transport.ProbeDeadline;
import dev.vigil.probe.transport.TransportFailure;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * HTTP and HTTPS checks: one HTTP/1.1 request (with the optional {@code body}), the verdict from
 * the raw status line ({@link StatusLineClassifier}: pass, a fail-fast status, or a failure), then,
 * only when the status passes, {@code headerMatch} over the response headers and {@code bodyMatch}
 * over the first 64 KiB of the body. Headers are limited to 32 KiB, the body is never kept beyond
 * 64 KiB, and the whole probe (connect, TLS, request, response) has one deadline.
 *
 * <p>WebSocket checks ({@link ProbeProtocol#WEBSOCKET}) go the same way with an upgrade request (a
 * fresh random {@code Sec-WebSocket-Key} per probe): they pass on {@code 101} with {@code Upgrade:
 * websocket} and the {@code Sec-WebSocket-Accept} RFC 6455 derives from the key, then send a close
 * frame and close; the connection is never reused.
 *
 * <p>By default each probe opens a fresh connection ({@code Connection: close}) and closes it as
 * soon as the verdict is known, as HAProxy does. With {@code reuseConnection} one idle connection
 * per backend is kept when the response was cleanly framed, as Envoy does; a reused connection that
 * turns out to be closed before any byte of a response is retried once on a fresh one.
 *
 * <p>The exchange above is one implementation over a {@link ProbeConnection}: TLS checks connect
 * with Vert.x's {@code NetClient}, plain ones with a bare socket on the calling context's event
 * loop ({@link ProbeConnection#plain}; the {@code dev.vigil.probe.transport} package says why).
 */
public final class HttpProber implements Prober {

  private static final String USER_AGENT = "vigil-probe";
  private static final String WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  private static final List<CheckSpec.HeaderMatch> WEBSOCKET_HEADERS =
      List.of(
          new CheckSpec.HeaderMatch("Sec-WebSocket-Accept", null),
          new CheckSpec.HeaderMatch("Upgrade", null));
  // FIN + close opcode, masked, empty payload (a client's frames are always masked), mask 0
  private static final byte[] CLOSE_FRAME = {(byte) 0x88, (byte) 0x80, 0, 0, 0, 0};

  private final Vertx vertx;
  private final ProbeConnection.Connector tlsConnector;
  private final ProbeConnection.Connector plainConnector;
  private final Map<ProbeTarget, Idle> idle = new ConcurrentHashMap<>();

  public HttpProber(Vertx vertx) {
    this.vertx = vertx;
    this.tlsConnector = ProbeConnection.tls(vertx);
    this.plainConnector = ProbeConnection.plain(vertx, tlsConnector);
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    long start = System.nanoTime();
    try {
      ProbeTarget probed =
          spec.port() == 0 ? target : new ProbeTarget(target.ip(), spec.portFor(target));
      Exchange exchange = new Exchange(probed, spec);
      exchange.start();
      return exchange.promise.future();
    } catch (RuntimeException e) {
      return Future.succeededFuture(
          ProbeResult.fail(Reason.INTERNAL, "prober error: " + e, ProbeResult.elapsedMs(start)));
    }
  }

  @Override
  public void forget(ProbeTarget target) {
    idle.entrySet()
        .removeIf(
            e -> {
              if (e.getKey().ip().equals(target.ip())) {
                e.getValue().connection.close();
                return true;
              }
              return false;
            });
  }

  @Override
  public Future<Void> close() {
    idle.values().forEach(i -> i.connection.close());
    idle.clear();
    return tlsConnector.close();
  }

  /** The number of idle connections kept for reuse. */
  public int idleConnections() {
    return idle.size();
  }

  /** A fresh {@code Sec-WebSocket-Key}: 16 random bytes, base64. */
  static String newWebSocketKey() {
    byte[] nonce = new byte[16];
    ThreadLocalRandom.current().nextBytes(nonce);
    return Base64.getEncoder().encodeToString(nonce);
  }

  /** The {@code Sec-WebSocket-Accept} a server must answer to {@code key} (RFC 6455 4.2.2). */
  static String expectedAccept(String key) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      byte[] digest = sha1.digest((key + WEBSOCKET_GUID).getBytes(StandardCharsets.US_ASCII));
      return Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }

  /**
   * A connection kept for reuse; while idle, any byte or error from it drops it (a response nobody
   * asked for), and its close forgets it.
   */
  private final class Idle implements ProbeConnection.Receiver {
    final ProbeTarget target;
    final ProbeConnection connection;
    final boolean tls;
    final CheckSpec.Tls settings;

    Idle(ProbeTarget target, ProbeConnection connection, boolean tls, CheckSpec.Tls settings) {
      this.target = target;
      this.connection = connection;
      this.tls = tls;
      this.settings = settings;
    }

    @Override
    public void onData(byte[] bytes, int offset, int length) {
      drop();
    }

    @Override
    public void onError(Throwable failure) {
      drop();
    }

    @Override
    public void onClose() {
      idle.remove(target, this);
    }

    void drop() {
      idle.remove(target, this);
      connection.close();
    }
  }

  /** One probe: connection, request, parse, verdict, then release of the connection. */
  private final class Exchange implements ProbeConnection.Receiver {
    final ProbeTarget target;
    final CheckSpec spec;
    final Promise<ProbeResult> promise = Promise.promise();
    final long start = System.nanoTime();
    final boolean collectBody;
    final boolean websocket;
    final String websocketKey;
    io.netty.util.concurrent.ScheduledFuture<?> deadline;
    ProbeConnection connection;
    HttpResponseParser parser;
    boolean reused;
    boolean retried;
    boolean verdictGiven;
    boolean delivered;
    ProbeResult result;
    boolean released;
    long received;

    Exchange(ProbeTarget target, CheckSpec spec) {
      this.target = target;
      this.spec = spec;
      this.websocket = spec.protocol() == ProbeProtocol.WEBSOCKET;
      this.collectBody = !websocket && spec.http().bodyMatch() != null;
      this.websocketKey = websocket ? newWebSocketKey() : null;
    }

    void start() {
      deadline = ProbeDeadline.schedule(vertx, spec.timeout().toMillis(), this::onDeadline);
      Idle kept = spec.reuseConnection() ? idle.remove(target) : null;
      if (kept != null && kept.tls == spec.usesTls() && kept.settings.equals(spec.tls())) {
        reused = true;
        attach(kept.connection);
      } else {
        if (kept != null) {
          kept.connection.close();
        }
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
              websocket ? WEBSOCKET_HEADERS : spec.http().headerMatch());
      received = 0;
      s.receive(this);
      s.write(request());
    }

    byte[] request() {
      byte[] head = head();
      byte[] body = websocket ? null : spec.http().bodyBytes();
      if (body == null) {
        return head;
      }
      byte[] request = Arrays.copyOf(head, head.length + body.length);
      System.arraycopy(body, 0, request, head.length, body.length);
      return request;
    }

    byte[] head() {
      CheckSpec.Http http = spec.http();
      String host = http.host() != null ? http.host() : hostHeader();
      StringBuilder r = new StringBuilder(128);
      if (websocket) {
        r.append("GET ").append(spec.websocket().path());
      } else {
        r.append(http.method()).append(' ').append(http.path());
      }
      r.append(" HTTP/1.1\r\n");
      boolean userAgent = false;
      boolean hostSet = false;
      for (Map.Entry<String, String> h : http.headers().entrySet()) {
        userAgent |= h.getKey().equalsIgnoreCase("User-Agent");
        hostSet |= h.getKey().equalsIgnoreCase("Host");
      }
      if (!hostSet) {
        r.append("Host: ").append(host).append("\r\n");
      }
      if (!userAgent) {
        r.append("User-Agent: ").append(USER_AGENT).append("\r\n");
      }
      r.append("Accept: */*\r\n");
      if (websocket) {
        r.append("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ")
            .append(websocketKey)
            .append("\r\nSec-WebSocket-Version: 13\r\n");
      } else if (!spec.reuseConnection()) {
        r.append("Connection: close\r\n");
      }
      if (http.body() != null && !websocket) {
        r.append("Content-Length: ")
            .append(http.body().getBytes(StandardCharsets.UTF_8).length)
            .append("\r\n");
      }
      for (Map.Entry<String, String> h : http.headers().entrySet()) {
        if (http.body() != null && !websocket && h.getKey().equalsIgnoreCase("Content-Length")) {
          continue; // the body's own length is sent
        }
        r.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
      }
      return r.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    String hostHeader() {
      String ip = target.ip().indexOf(':') >= 0 ? "[" + target.ip() + "]" : target.ip();
      int defaultPort = spec.usesTls() ? 443 : 80;
      return target.port() == defaultPort ? ip : ip + ":" + target.port();
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
      } else if (!accept.get(0).equals(expectedAccept(websocketKey))) {
        detail =
            "Sec-WebSocket-Accept "
                + StatusLineClassifier.excerpt(accept.get(0))
                + " does not answer the key";
      }
      if (detail != null) {
        return ProbeResult.fail(Reason.WEBSOCKET_HANDSHAKE, detail, latency).withStatusCode(101);
      }
      connection.write(CLOSE_FRAME);
      return ProbeResult.httpStatus(true, 101, latency);
    }

    /** The first headerMatch entry the response fails, as a verdict; null when all hold. */
    ProbeResult headerMismatch() {
      String detail =
          CheckSpec.HeaderMatch.firstMismatch(spec.http().headerMatch(), parser::headerValues);
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
      if (spec.http().bodyMatch().matcher(parser.bodyText()).find()) {
        return ProbeResult.httpStatus(true, code, ProbeResult.elapsedMs(start));
      }
      return ProbeResult.fail(
              Reason.BODY_MISMATCH,
              "body does not match" + (parser.bodyTruncated() ? " (first 64 KiB)" : ""),
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
     * Ends the exchange: keeps the connection for reuse, or closes it; after a whole response
     * ({@code answered}) the peer closes next, so the connection may wait for that ({@link
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
        Idle entry = new Idle(target, s, spec.usesTls(), spec.tls());
        s.receive(entry);
        Idle previous = idle.put(target, entry);
        if (previous != null) {
          previous.connection.close();
        }
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
}
