package dev.vigil.probe;

import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.LinuxSocket;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.Completable;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ProbeConnection} over a bare non-blocking socket registered with the calling Vert.x
 * context's own epoll event loop (Netty 4.2's {@link EpollIoHandle}): the path of plain probes when
 * Vert.x runs on epoll. A probe is a connect, one small write, reads until the verdict and a close;
 * Netty's {@code EpollSocketChannel} pays for a pipeline, a channel config, promises and its own
 * bookkeeping of interest flags around that. Per probe this makes two {@code epoll_ctl} calls (the
 * registration, then one change to {@code EPOLLIN | EPOLLOUT | EPOLLRDHUP} edge-triggered, kept
 * until the close; the channel made six) and asks the kernel for no local or peer address (issue
 * 15: the channel's {@code epoll_ctl}, {@code getsockname}, {@code getpeername} and {@code
 * getsockopt} calls were what was left between Vert.x and HAProxy; {@code
 * bench/profiles/syscalls-netty.md}). The socket options are the channel's: {@code TCP_NODELAY},
 * and {@code TCP_QUICKACK} off for a probe that writes first ({@link
 * ChannelConnection#sendsFirst}).
 *
 * <p>Everything runs on the event loop; each readiness event is handled inside one {@link
 * ContextInternal#emit} on the caller's context, so every receiver callback and the connect's
 * result run with that context current, as Vert.x's own {@code NetSocket} handlers do. Reads go
 * through one 8 KiB direct buffer and one array per event-loop thread, handed out only as far as
 * the receiver still wants them. The socket is closed before its registration is cancelled, so the
 * kernel drops it from the epoll set with the file descriptor and no third {@code epoll_ctl} runs.
 */
final class EpollConnection implements ProbeConnection, EpollIoHandle {

  private static final int IPPROTO_TCP = 6;
  private static final int TCP_QUICKACK = 12;
  private static final int CHUNK = 8 * 1024;
  private static final EpollIoOps INTEREST =
      EpollIoOps.EPOLLIN
          .with(EpollIoOps.EPOLLOUT)
          .with(EpollIoOps.EPOLLRDHUP)
          .with(EpollIoOps.EPOLLET);
  private static final int OUT = EpollIoOps.EPOLLOUT.value();
  private static final int OUT_OR_ERR = OUT | EpollIoOps.EPOLLERR.value();

  /** The direct buffer the kernel reads into and writes from, and its copy for receivers. */
  private static final class Scratch {
    final ByteBuffer direct = ByteBuffer.allocateDirect(CHUNK);
    final byte[] array = new byte[CHUNK];
  }

  private static final FastThreadLocal<Scratch> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected Scratch initialValue() {
          return new Scratch();
        }
      };

  private final LinuxSocket socket;
  private final ContextInternal context;
  private final IoEventLoop loop;
  private final Handler<EpollIoEvent> onEvent = e -> ready(e.ops().value());
  private IoRegistration registration;
  private Completable<ProbeConnection> connecting;
  private ScheduledFuture<?> connectTimeout;
  private Receiver receiver;
  private byte[] unsent;
  private boolean closed;

  private EpollConnection(LinuxSocket socket, ContextInternal context, IoEventLoop loop) {
    this.socket = socket;
    this.context = context;
    this.loop = loop;
  }

  @Override
  public FileDescriptor fd() {
    return socket;
  }

  /** The socket (for tests: its family and options). */
  LinuxSocket socket() {
    return socket;
  }

  /** The event loop the socket is registered with. */
  EventLoop loop() {
    return loop;
  }

  @Override
  public void handle(IoRegistration registration, IoEvent event) {
    // the event itself, not its flags: an int would be boxed for every readiness event
    context.emit((EpollIoEvent) event, onEvent);
  }

  private void ready(int ops) {
    if (closed) {
      return;
    }
    if (connecting != null) {
      if ((ops & OUT_OR_ERR) == 0) {
        return; // the outcome of a connect comes with EPOLLOUT or EPOLLERR
      }
      try {
        if (!socket.finishConnect()) {
          return;
        }
      } catch (IOException e) {
        connectFailed(e);
        return;
      }
      connected();
    }
    if (unsent != null && (ops & OUT) != 0) {
      byte[] rest = unsent;
      unsent = null;
      send(rest);
    }
    if (!closed && (ops & ~OUT) != 0) {
      read((ops & ~(OUT | EpollIoOps.EPOLLIN.value())) != 0);
    }
  }

  private void connected() {
    Completable<ProbeConnection> done = connecting;
    connecting = null;
    connectTimeout.cancel(false);
    connectTimeout = null;
    done.succeed(this);
  }

  private void connectFailed(Throwable failure) {
    Completable<ProbeConnection> done = connecting;
    connecting = null;
    if (connectTimeout != null) {
      connectTimeout.cancel(false);
      connectTimeout = null;
    }
    release();
    done.fail(failure);
  }

  /**
   * Reads until the kernel has no more (a short read means that, unless the peer also hung up: then
   * until the end), the receiver has had enough, or the connection closes.
   */
  private void read(boolean hungUp) {
    Scratch scratch = SCRATCH.get();
    while (!closed) {
      int n;
      try {
        n = socket.recv(scratch.direct, 0, CHUNK);
      } catch (IOException e) {
        failed(e);
        return;
      }
      if (n < 0) {
        close();
        return;
      }
      if (n == 0) {
        return;
      }
      Receiver r = receiver;
      if (r != null) {
        scratch.direct.get(0, scratch.array, 0, n);
        r.onData(scratch.array, 0, n);
      }
      if (n < CHUNK && !hungUp) {
        return;
      }
    }
  }

  @Override
  public void write(byte[] bytes) {
    if (!loop.inEventLoop()) {
      loop.execute(() -> write(bytes));
      return;
    }
    if (closed) {
      return;
    }
    if (unsent != null || connecting != null) {
      unsent = unsent == null ? bytes : concat(unsent, bytes);
      return;
    }
    send(bytes);
  }

  /** Writes what the kernel takes now; the rest waits for the next {@code EPOLLOUT}. */
  private void send(byte[] bytes) {
    ByteBuffer direct = SCRATCH.get().direct;
    int offset = 0;
    while (offset < bytes.length) {
      int n = Math.min(CHUNK, bytes.length - offset);
      direct.put(0, bytes, offset, n);
      int written;
      try {
        written = socket.send(direct, 0, n);
      } catch (IOException e) {
        failed(e);
        return;
      }
      offset += written;
      if (written < n) {
        unsent = Arrays.copyOfRange(bytes, offset, bytes.length);
        return;
      }
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }

  @Override
  public void receive(Receiver receiver) {
    this.receiver = receiver;
  }

  private void failed(IOException cause) {
    Receiver r = receiver;
    if (r != null) {
      r.onError(cause);
    }
    close(); // as Vert.x closes a connection after an exception
  }

  /**
   * Closes the socket (a FIN) and tells the receiver in place; also what Netty calls when the loop
   * shuts down with the socket still registered.
   */
  @Override
  public void close() {
    if (!loop.inEventLoop()) {
      loop.execute(this::close);
      return;
    }
    if (closed) {
      return;
    }
    release();
    Receiver r = receiver;
    receiver = null;
    if (r != null) {
      context.emit(r, Receiver::onClose);
    }
  }

  /** Closes the socket, then drops its registration (the kernel already took it off the set). */
  private void release() {
    closed = true;
    try {
      socket.close();
    } catch (IOException ignored) {
      // nothing left to do with a socket that cannot be closed
    }
    if (registration != null) {
      registration.cancel();
    }
  }

  /** Opens sockets on the caller's epoll event loop. */
  static final class Connector implements ProbeConnection.Connector {

    private final Vertx vertx;
    private final ProbeConnection.Connector fallback;

    Connector(Vertx vertx, ProbeConnection.Connector fallback) {
      this.vertx = vertx;
      this.fallback = fallback;
    }

    /**
     * Whether the probe writes as soon as it is connected: HTTP and WebSocket requests, TCP checks
     * with {@code send}. Only then is the handshake's last ACK held back ({@code TCP_QUICKACK} off,
     * as HAProxy does for a connection with data to send) so that it rides on the request: 2
     * loopback segments fewer per probe (10 -> 8, HAProxy 7.9; {@code bench/profiles/segments.md}).
     * A server that speaks first would wait for that ACK to accept, so a connect-only or
     * expect-only TCP check keeps the immediate ACK.
     */
    static boolean sendsFirst(CheckSpec spec) {
      return spec.protocol() != Protocol.TCP || spec.tcp().send() != null;
    }

    /**
     * Connects on the caller's loop (hopping to it when called from elsewhere). A host name, which
     * a probe target never is, or a loop that is not an epoll one goes to {@code fallback}.
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
          || !loop.isCompatible(EpollConnection.class)) {
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

    private static void open(
        ContextInternal context,
        IoEventLoop loop,
        InetSocketAddress remote,
        boolean quickAckOff,
        int timeoutMs,
        Completable<ProbeConnection> done) {
      LinuxSocket socket;
      try {
        socket =
            LinuxSocket.newSocketStream(
                remote.getAddress() instanceof Inet4Address
                    ? SocketProtocolFamily.INET
                    : SocketProtocolFamily.INET6);
      } catch (RuntimeException e) { // out of file descriptors
        context.emit(e, done::fail);
        return;
      }
      EpollConnection connection = new EpollConnection(socket, context, loop);
      context.emit(
          null,
          v -> {
            try {
              socket.setTcpNoDelay(true);
              if (quickAckOff) {
                socket.setIntOpt(IPPROTO_TCP, TCP_QUICKACK, 0);
              }
              boolean connected = socket.connect(remote);
              Future<IoRegistration> registered = loop.register(connection);
              if (!registered.isSuccess()) {
                throw new IOException("epoll registration failed", registered.cause());
              }
              connection.registration = registered.getNow();
              connection.registration.submit(INTEREST);
              if (connected) {
                done.succeed(connection);
                return;
              }
              connection.connecting = done;
              connection.connectTimeout =
                  loop.schedule(
                      () -> context.emit(null, x -> connection.timedOut(timeoutMs, remote)),
                      timeoutMs,
                      TimeUnit.MILLISECONDS);
            } catch (IOException | RuntimeException e) {
              connection.connecting = done;
              connection.connectFailed(e);
            }
          });
    }
  }

  private void timedOut(int timeoutMs, InetSocketAddress remote) {
    if (connecting != null && !closed) {
      connectTimeout = null;
      connectFailed(
          new ConnectTimeoutException(
              "connection timed out after " + timeoutMs + " ms: " + remote));
    }
  }
}
