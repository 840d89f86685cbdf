package dev.vigil.security;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who may hold a connection to a port, and for how long (issue 31, item 6): at most {@code
 * maxConnections} open connections, at most {@code maxPerSource} of them from one remote address,
 * and a deadline on each request head: a connection that has not sent a whole request head within
 * {@code headerTimeoutMs} of its opening (or of the end of its last answer, when kept alive) is
 * closed, however many bytes trickle in meanwhile (an idle timeout resets on every byte, so alone
 * it lets a slowloris hold a connection forever). Once the head is in, the answer must be finished
 * within {@code requestTimeoutMs} or the connection is closed.
 *
 * <p>Used by the outcome intake and the metrics port alike. Each connection's state is touched only
 * on its own event loop; the counts are shared.
 */
public final class ConnectionGate {
  /**
   * @param maxConnections open connections to the port; one past it is closed at once
   * @param maxPerSource open connections from one remote address; one past it is closed at once
   * @param headerTimeoutMs time a connection has to send a whole request head
   * @param requestTimeoutMs time from a whole request head to the end of its answer
   */
  public record Limits(
      int maxConnections, int maxPerSource, long headerTimeoutMs, long requestTimeoutMs) {
    public Limits {
      if (maxConnections < 1 || maxPerSource < 1 || headerTimeoutMs < 1 || requestTimeoutMs < 1) {
        throw new IllegalArgumentException(
            "connection limits and timeouts must be positive, got " + this);
      }
    }
  }

  /** Why a connection was closed by the gate (the metric's label). */
  public enum CloseReason {
    TOO_MANY_CONNECTIONS,
    TOO_MANY_FROM_SOURCE,
    HEADER_TIMEOUT,
    REQUEST_TIMEOUT
  }

  private final Vertx vertx;
  private final Limits limits;
  private final Handler<CloseReason> refused;
  private final AtomicInteger open = new AtomicInteger();
  private final Map<String, AtomicInteger> perSource = new ConcurrentHashMap<>();
  private final Map<HttpConnection, HeldConnection> slots = new ConcurrentHashMap<>();

  /** One connection: its source and its running deadline. Touched on its event loop only. */
  private static final class HeldConnection {
    final String source;
    long timer = -1;

    HeldConnection(String source) {
      this.source = source;
    }
  }

  /**
   * @param refused told (on the connection's event loop) each time the gate closes a connection
   */
  public ConnectionGate(Vertx vertx, Limits limits, Handler<CloseReason> refused) {
    this.vertx = vertx;
    this.limits = limits;
    this.refused = refused;
  }

  public Limits limits() {
    return limits;
  }

  /** Guards {@code server}: its connections, and each request of {@code handler}. */
  public HttpServer guard(HttpServer server, Handler<HttpServerRequest> handler) {
    server.connectionHandler(this::opened);
    return server.requestHandler(
        req -> {
          headArrived(req);
          handler.handle(req);
        });
  }

  /** Open connections now. */
  public int connections() {
    return open.get();
  }

  /** Open connections from {@code source} now. */
  public int connections(String source) {
    AtomicInteger n = perSource.get(source);
    return n == null ? 0 : n.get();
  }

  private void opened(HttpConnection conn) {
    String source = source(conn);
    AtomicInteger fromSource = perSource.computeIfAbsent(source, s -> new AtomicInteger());
    int total = open.incrementAndGet();
    int mine = fromSource.incrementAndGet();
    HeldConnection slot = new HeldConnection(source);
    slots.put(conn, slot);
    conn.closeHandler(v -> closed(conn, slot));
    if (total > limits.maxConnections()) {
      refuse(conn, CloseReason.TOO_MANY_CONNECTIONS);
    } else if (mine > limits.maxPerSource()) {
      refuse(conn, CloseReason.TOO_MANY_FROM_SOURCE);
    } else {
      arm(conn, slot, limits.headerTimeoutMs(), CloseReason.HEADER_TIMEOUT);
    }
  }

  private void headArrived(HttpServerRequest req) {
    HttpConnection conn = req.connection();
    HeldConnection slot = conn == null ? null : slots.get(conn);
    if (slot == null) {
      return;
    }
    arm(conn, slot, limits.requestTimeoutMs(), CloseReason.REQUEST_TIMEOUT);
    // The next request on a kept-alive connection has its own head deadline.
    req.response()
        .bodyEndHandler(v -> arm(conn, slot, limits.headerTimeoutMs(), CloseReason.HEADER_TIMEOUT));
  }

  private void arm(HttpConnection conn, HeldConnection slot, long ms, CloseReason why) {
    if (slot.timer >= 0) {
      vertx.cancelTimer(slot.timer);
    }
    slot.timer = vertx.setTimer(ms, id -> refuse(conn, why));
  }

  private void refuse(HttpConnection conn, CloseReason why) {
    refused.handle(why);
    conn.close();
  }

  private void closed(HttpConnection conn, HeldConnection slot) {
    if (slots.remove(conn) == null) {
      return;
    }
    if (slot.timer >= 0) {
      vertx.cancelTimer(slot.timer);
    }
    open.decrementAndGet();
    perSource.computeIfPresent(slot.source, (s, n) -> n.decrementAndGet() <= 0 ? null : n);
  }

  /** The remote IP address of a connection ("" when unknown). */
  public static String source(HttpConnection conn) {
    var address = conn.remoteAddress();
    return address == null || address.hostAddress() == null ? "" : address.hostAddress();
  }
}
