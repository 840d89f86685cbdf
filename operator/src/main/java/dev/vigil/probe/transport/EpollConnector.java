package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeTarget;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.LinuxSocket;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.Future;
import io.vertx.core.Completable;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;

/** Opens sockets on the caller's epoll event loop. */
final class EpollConnector implements ProbeConnection.Connector {

  private static final int IPPROTO_TCP = 6;
  private static final int TCP_QUICKACK = 12;
  private static final int IPPROTO_IP = 0;

  /**
   * Linux's {@code IP_BIND_ADDRESS_NO_PORT}: a bind to a source address leaves the port to the
   * connect, which picks it per destination, instead of taking one at bind time from the range
   * every destination shares.
   */
  private static final int IP_BIND_ADDRESS_NO_PORT = 24;

  private static final EpollIoOps INTEREST =
      EpollIoOps.EPOLLIN
          .with(EpollIoOps.EPOLLOUT)
          .with(EpollIoOps.EPOLLRDHUP)
          .with(EpollIoOps.EPOLLET);

  private final Vertx vertx;
  private final ProbeConnection.Connector fallback;
  private final InetSocketAddress source;

  EpollConnector(Vertx vertx, ProbeConnection.Connector fallback, SourceAddress source) {
    this.vertx = vertx;
    this.fallback = fallback;
    this.source = source.socketAddress();
  }

  /**
   * Whether the probe writes as soon as it is connected: HTTP and WebSocket requests, TCP checks
   * with {@code send}. Only then is the handshake's last ACK held back ({@code TCP_QUICKACK} off,
   * as HAProxy does for a connection with data to send) so that it rides on the request: 2 loopback
   * segments fewer per probe (10 -> 8, HAProxy 7.9; {@code bench/profiles/segments.md}). A server
   * that speaks first would wait for that ACK to accept, so a connect-only or expect-only TCP check
   * keeps the immediate ACK.
   */
  static boolean sendsFirst(CheckSpec spec) {
    return spec.protocol() != ProbeProtocol.TCP || spec.tcp().send() != null;
  }

  /**
   * Connects on the caller's loop (hopping to it when called from elsewhere). A host name, which a
   * probe target never is, or a loop that is not an epoll one goes to {@code fallback}.
   */
  @Override
  public void connect(
      ProbeTarget target, CheckSpec spec, int timeoutMs, Completable<ProbeConnection> done) {
    InetAddress address = NetUtil.createInetAddressFromIpAddressString(target.ip());
    ContextInternal context = ContextInternal.current();
    if (context == null) {
      context = (ContextInternal) vertx.getOrCreateContext();
    }
    if (address == null
        || !(context.nettyEventLoop() instanceof IoEventLoop loop)
        || !loop.isCompatible(EpollSlot.class)) {
      fallback.connect(target, spec, timeoutMs, done);
      return;
    }
    InetSocketAddress remote = new InetSocketAddress(address, target.port());
    boolean quickAckOff = sendsFirst(spec);
    ContextInternal on = context;
    if (loop.inEventLoop()) {
      open(on, loop, remote, quickAckOff, timeoutMs, done);
    } else {
      loop.execute(() -> open(on, loop, remote, quickAckOff, timeoutMs, done));
    }
  }

  private void open(
      ContextInternal context,
      IoEventLoop loop,
      InetSocketAddress remote,
      boolean quickAckOff,
      int timeoutMs,
      Completable<ProbeConnection> done) {
    boolean ipv6 = !(remote.getAddress() instanceof Inet4Address);
    EpollSlot slot = pooled(ipv6);
    boolean fresh = slot == null;
    if (fresh) {
      try {
        slot =
            new EpollSlot(
                LinuxSocket.newSocketStream(
                    ipv6 ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET),
                loop,
                ipv6,
                source);
      } catch (RuntimeException e) { // out of file descriptors
        context.emit(e, done::fail);
        return;
      }
    }
    EpollConnection connection = new EpollConnection(slot, context);
    slot.current = connection;
    EpollSlot on = slot;
    context.emit(
        null,
        v -> {
          try {
            if (connect(on, fresh, loop, remote, quickAckOff)) {
              done.succeed(connection);
            } else {
              connection.awaitConnect(done, timeoutMs, remote);
            }
          } catch (IOException | RuntimeException e) {
            connection.failConnect(done, e);
          }
        });
  }

  /**
   * A socket of this loop's pool bound as this connector binds (the pool is the loop's, shared by
   * every connector on it; a disconnect keeps a socket's bound address), or null.
   */
  private EpollSlot pooled(boolean ipv6) {
    EpollSlot slot = SocketPool.current().of(ipv6).poll();
    if (slot != null && !Objects.equals(slot.source, source)) {
      slot.destroy();
      return null;
    }
    return slot;
  }

  /**
   * Sets the socket's options, binds a fresh one to the source address if any, and starts its
   * connect (registering a fresh socket with the loop, for every readiness event it will have);
   * true when it connected at once.
   */
  private static boolean connect(
      EpollSlot slot,
      boolean fresh,
      IoEventLoop loop,
      InetSocketAddress remote,
      boolean quickAckOff)
      throws IOException {
    LinuxSocket socket = slot.socket;
    if (fresh) {
      socket.setTcpNoDelay(true);
      if (slot.source != null) {
        socket.setIntOpt(IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1);
        socket.bind(slot.source);
      }
    }
    if (quickAckOff) {
      socket.setIntOpt(IPPROTO_TCP, TCP_QUICKACK, 0);
    }
    boolean connected = socket.connect(remote);
    if (fresh) {
      Future<IoRegistration> registered = loop.register(slot);
      if (!registered.isSuccess()) {
        throw new IOException("epoll registration failed", registered.cause());
      }
      slot.registration = registered.getNow();
      slot.registration.submit(INTEREST);
    }
    return connected;
  }
}
