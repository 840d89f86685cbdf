package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.impl.transports.EpollTransport;
import io.vertx.core.impl.transports.NioTransport;
import io.vertx.core.internal.VertxInternal;

/**
 * One client connection a probe talks over: bytes out, bytes in, and the two ways it ends. {@code
 * http.HttpProber}'s exchange (and {@code tcp.TcpProber}'s attempt) run over this seam, so the
 * probe logic is one implementation for every transport: {@link NetSocketConnection} (a Vert.x
 * {@code NetSocket}, used for TLS), and for plain TCP {@link EpollConnection} (a bare socket on an
 * epoll loop) or {@link ChannelConnection} (a Netty NIO channel); {@link #plain} picks.
 *
 * <p>Every callback of a {@link Receiver} runs on the Vert.x context that opened the connection,
 * with that context current ({@code Vertx.currentContext()}), as a {@code NetSocket} handler does.
 */
public interface ProbeConnection {

  /** Where the bytes, errors and the end of a connection go. */
  interface Receiver {

    /**
     * Bytes read. The array is only valid during the call (it may be a reused buffer); a connection
     * stops handing out the rest of a read once its receiver was replaced.
     */
    void onData(byte[] bytes, int offset, int length);

    /** A read or write failed; {@link #onClose()} follows. */
    void onError(Throwable failure);

    /** The connection closed (by the peer, after an error, or by {@link #close()}). */
    void onClose();
  }

  /** Opens connections. */
  interface Connector {

    /**
     * Connects to {@code target} within {@code timeoutMs}; {@code done} runs on the caller's Vert.x
     * context with the connection or the failure (the exception of the transport, for {@link
     * TransportFailure#classify}).
     */
    void connect(
        ProbeTarget target, CheckSpec spec, int timeoutMs, Completable<ProbeConnection> done);

    /** Releases the connector's resources; connections it opened are closed by their owners. */
    default Future<Void> close() {
      return Future.succeededFuture();
    }
  }

  /**
   * The connector of TLS probes (and of plain ones no other transport can take): one shared Vert.x
   * {@code NetClient}, which owns the handshake, SNI and verification ({@link
   * NetSocketConnection}).
   */
  static Connector tls(Vertx vertx) {
    return tls(vertx, SourceAddress.KERNEL);
  }

  /** As {@link #tls(Vertx)}, every connection bound to {@code source}. */
  static Connector tls(Vertx vertx, SourceAddress source) {
    return new NetSocketConnection.Connector(vertx, source);
  }

  /**
   * The connector of plain probes on {@code vertx}'s event loops: bare sockets when its transport
   * is epoll (the operator's default), Netty NIO channels when it is NIO (the fallback), else
   * {@code fallback} (io_uring, kqueue). Each also hands host names to {@code fallback}.
   */
  static Connector plain(Vertx vertx, Connector fallback) {
    return plain(vertx, fallback, SourceAddress.KERNEL);
  }

  /** As {@link #plain(Vertx, Connector)}, every socket bound to {@code source}. */
  static Connector plain(Vertx vertx, Connector fallback, SourceAddress source) {
    Object transport = ((VertxInternal) vertx).transport();
    if (transport instanceof EpollTransport) {
      return new EpollConnector(vertx, fallback, source);
    }
    if (transport instanceof NioTransport) {
      return new ChannelConnection.Connector(vertx, fallback, source);
    }
    return fallback;
  }

  /** Sends {@code bytes} (never modified afterwards by the caller). */
  void write(byte[] bytes);

  /** Routes what happens next to {@code receiver}; {@code null} ignores it all. */
  void receive(Receiver receiver);

  /** Closes (with a FIN); the receiver in place is told {@link Receiver#onClose()}. */
  void close();

  /**
   * Ends an exchange whose peer closes next (it answered a request that said {@code Connection:
   * close}): the receiver in place is told {@link Receiver#onClose()} now, as by {@link #close()},
   * and the transport may wait for the peer's close before its own. By default, {@link #close()}.
   */
  default void finish() {
    close();
  }
}
