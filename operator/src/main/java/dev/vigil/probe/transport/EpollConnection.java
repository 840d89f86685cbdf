package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeScheduler;
import dev.vigil.probe.ProbeTarget;
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
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ProbeConnection} over a bare non-blocking socket registered with the calling Vert.x
 * context's own epoll event loop (Netty 4.2's {@link EpollIoHandle}): the path of plain probes when
 * Vert.x runs on epoll. A probe is a connect, one small write, reads until the verdict and a close;
 * Netty's {@code EpollSocketChannel} pays for a pipeline, a channel config, promises and its own
 * bookkeeping of interest flags around that (issue 15: {@code bench/profiles/syscalls-netty.md}).
 * The socket options are the channel's: {@code TCP_NODELAY}, and {@code TCP_QUICKACK} off for a
 * probe that writes first ({@link Connector#sendsFirst}).
 *
 * <p>A socket outlives its connection when the peer closed first (the usual end of an HTTP check
 * and of a TCP check whose server hangs up): {@code connect(AF_UNSPEC)} resets it (a reset to a
 * peer that has already closed: no application sees it, and neither side keeps a {@code
 * TIME_WAIT}), and it waits in its loop's pool, still registered with {@code EPOLLIN | EPOLLOUT |
 * EPOLLRDHUP} edge-triggered, for the next probe's connect: a new handshake from a new ephemeral
 * port, without a new socket, socket option, address query or {@code epoll_ctl} (5 system calls a
 * probe fewer; {@code bench/profiles/syscalls-reuse.md}). After a whole answer to a request that
 * said {@code Connection: close} ({@link #finish}) the socket waits for that close, up to {@link
 * #DRAIN_MS}. Any other end (the probe closes first, an error, a timeout, a peer that does not
 * close in time) closes the socket with a FIN, as before; the kernel drops it from the epoll set
 * with the file descriptor, before the registration is cancelled.
 *
 * <p>Everything runs on the event loop; each readiness event is handled inside one {@link
 * ContextInternal#emit} on the caller's context, so every receiver callback and the connect's
 * result run with that context current, as Vert.x's own {@code NetSocket} handlers do. Reads go
 * through one 8 KiB direct buffer and one array per event-loop thread, handed out only as far as
 * the receiver still wants them.
 */
final class EpollConnection implements ProbeConnection {

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

  /** {@code EPOLLHUP} (the kernel's, passed on by Netty in an event's ops; it has no constant). */
  private static final int HUP = 0x10;

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

  /**
   * Idle sockets kept per event loop and address family: as many as a loop has probes unanswered at
   * most ({@link ProbeScheduler#MAX_BACKLOG}), so a steady load opens no new ones.
   */
  static final int POOLED = ProbeScheduler.MAX_BACKLOG;

  /**
   * A socket with its epoll registration, kept across probes: the connection on it now, or none
   * while it waits in its loop's pool.
   */
  static final class Slot implements EpollIoHandle {
    final LinuxSocket socket;
    final IoEventLoop loop;
    final boolean ipv6;
    IoRegistration registration;
    EpollConnection current;
    boolean shut;

    Slot(LinuxSocket socket, IoEventLoop loop, boolean ipv6) {
      this.socket = socket;
      this.loop = loop;
      this.ipv6 = ipv6;
    }

    @Override
    public FileDescriptor fd() {
      return socket;
    }

    @Override
    public void handle(IoRegistration registration, IoEvent event) {
      EpollConnection c = current;
      if (c != null) {
        // the event itself, not its flags: an int would be boxed for every readiness event
        c.context.emit((EpollIoEvent) event, c.onEvent);
      }
    }

    /**
     * What Netty calls when the loop shuts down with the socket still registered: ends the
     * connection on it, if any, and closes the socket either way (nothing goes back to the pool).
     */
    @Override
    public void close() {
      shut = true;
      EpollConnection c = current;
      if (c != null) {
        c.close();
      }
      destroy();
    }

    void destroy() {
      current = null;
      try {
        socket.close();
      } catch (IOException ignored) {
        // nothing left to do with a socket that cannot be closed
      }
      if (registration != null) {
        registration.cancel();
      }
    }
  }

  /**
   * How long a {@linkplain #finish() finished} connection waits for its peer's close before it
   * closes first (a FIN); a peer that honours {@code Connection: close} closes within microseconds.
   */
  static final long DRAIN_MS = 1000;

  /**
   * The idle sockets of one event loop, and its finished connections waiting for their peers' close
   * (oldest first; one timer per loop closes those past {@link #DRAIN_MS}).
   */
  static final class Pool {
    final ArrayDeque<Slot> inet = new ArrayDeque<>();
    final ArrayDeque<Slot> inet6 = new ArrayDeque<>();
    final ArrayDeque<EpollConnection> draining = new ArrayDeque<>();
    ScheduledFuture<?> sweep;

    ArrayDeque<Slot> of(boolean ipv6) {
      return ipv6 ? inet6 : inet;
    }

    void drain(EpollConnection c) {
      draining.addLast(c);
      if (sweep == null) {
        sweep = c.loop.schedule(() -> sweep(c.loop), DRAIN_MS, TimeUnit.MILLISECONDS);
      }
    }

    /** Closes the connections whose peers did not close in time; runs on the loop. */
    void sweep(IoEventLoop loop) {
      sweep = null;
      long now = System.nanoTime();
      EpollConnection c;
      while ((c = draining.peekFirst()) != null && now - c.drainUntil >= 0) {
        c.endDrain(false); // takes it off the head
      }
      if (c != null) {
        sweep = loop.schedule(() -> sweep(loop), c.drainUntil - now, TimeUnit.NANOSECONDS);
      }
    }

    /** The number of idle sockets of the calling event loop's thread (for tests). */
    static int idle() {
      Pool pool = POOL.get();
      return pool.inet.size() + pool.inet6.size();
    }
  }

  private static final FastThreadLocal<Pool> POOL =
      new FastThreadLocal<>() {
        @Override
        protected Pool initialValue() {
          return new Pool();
        }
      };

  private final Slot slot;
  private final LinuxSocket socket;
  private final ContextInternal context;
  private final IoEventLoop loop;
  private final Handler<EpollIoEvent> onEvent = e -> ready(e.ops().value());
  private Completable<ProbeConnection> connecting;
  private ScheduledFuture<?> connectTimeout;
  private Receiver receiver;
  private byte[] unsent;
  private boolean closed;
  private boolean peerClosed;
  private boolean broken;
  private boolean draining;
  private long drainUntil;

  private EpollConnection(Slot slot, ContextInternal context) {
    this.slot = slot;
    this.socket = slot.socket;
    this.context = context;
    this.loop = slot.loop;
  }

  /** The socket with its registration (for tests). */
  Slot slot() {
    return slot;
  }

  /** The socket (for tests: its family and options). */
  LinuxSocket socket() {
    return socket;
  }

  /** The event loop the socket is registered with. */
  EventLoop loop() {
    return loop;
  }

  private void ready(int ops) {
    if (draining) {
      drain();
      return;
    }
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
      if ((ops & HUP) != 0) {
        // no error and a hang-up: what a reused socket reported after its reset, read by the
        // kernel before this connect and handed on in the same batch; the connect's own comes next
        return;
      }
      connected();
    }
    if (!closed && unsent != null && (ops & OUT) != 0) {
      byte[] rest = unsent;
      unsent = null;
      send(rest);
    }
    if (!closed && (ops & ~OUT) != 0) {
      boolean hungUp = (ops & ~(OUT | EpollIoOps.EPOLLIN.value())) != 0;
      peerClosed |= hungUp;
      read(hungUp);
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
        peerClosed = true;
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
    broken = true;
    Receiver r = receiver;
    if (r != null) {
      r.onError(cause);
    }
    close(); // as Vert.x closes a connection after an exception
  }

  /**
   * Ends the connection (a FIN, or a reset once the peer has closed: {@link #release}) and tells
   * the receiver in place.
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
    tellClosed();
  }

  /** Tells the receiver in place, if any, that the connection is over. */
  private void tellClosed() {
    Receiver r = receiver;
    receiver = null;
    if (r != null) {
      context.emit(r, Receiver::onClose);
    }
  }

  /**
   * Tells the receiver the connection is over now and, unless the peer has closed already, waits up
   * to {@link #DRAIN_MS} for it to close (reading and dropping what else it sends), so that the
   * socket can go back to the pool instead of ending with a FIN of its own; a peer that does not
   * close in time, or too many waiting on this loop ({@link #POOLED}), gets the FIN.
   */
  @Override
  public void finish() {
    if (!loop.inEventLoop()) {
      loop.execute(this::finish);
      return;
    }
    if (closed) {
      return;
    }
    Pool pool = POOL.get();
    if (peerClosed || broken || connecting != null || slot.shut || pool.draining.size() >= POOLED) {
      close();
      return;
    }
    closed = true;
    draining = true;
    drainUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MS);
    pool.drain(this);
    tellClosed();
    // no read here: a FIN not in the event just handled arrives as an event of its own (edge-
    // triggered readiness reports each arrival after the last epoll_wait)
  }

  /**
   * Reads and drops what the peer still sends, until its close (the socket is pooled) or an error.
   */
  private void drain() {
    ByteBuffer direct = SCRATCH.get().direct;
    while (draining) {
      int n;
      try {
        n = socket.recv(direct, 0, CHUNK);
      } catch (IOException e) {
        endDrain(false);
        return;
      }
      if (n < 0) {
        endDrain(true);
        return;
      }
      if (n == 0) {
        return;
      }
    }
  }

  /** Ends the wait: pooled when the peer closed cleanly, else closed with a FIN. */
  private void endDrain(boolean peerClosedCleanly) {
    draining = false;
    POOL.get().draining.removeFirstOccurrence(this); // most often the head: peers close in order
    peerClosed = peerClosedCleanly;
    broken = !peerClosedCleanly;
    release();
  }

  /**
   * Ends this connection on its socket. Once the peer has closed its side, the socket goes back to
   * its loop's pool, still registered: {@code connect(AF_UNSPEC)} resets it (a reset to a peer that
   * has already closed), and the next probe connects it again without a new socket, options or
   * {@code epoll_ctl}. Otherwise it is closed (a FIN), then its registration dropped (the kernel
   * already took it off the set).
   */
  private void release() {
    closed = true;
    if (slot.current != this) {
      return;
    }
    slot.current = null;
    if (peerClosed && !broken && connecting == null && !slot.shut) {
      ArrayDeque<Slot> idle = POOL.get().of(slot.ipv6);
      if (idle.size() < POOLED) {
        try {
          socket.disconnect(); // leaves ECONNRESET in SO_ERROR: the next connect clears it
          idle.push(slot);
          return;
        } catch (IOException e) {
          // closed below
        }
      }
    }
    slot.destroy();
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
      return spec.protocol() != ProbeProtocol.TCP || spec.tcp().send() != null;
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
          || !loop.isCompatible(Slot.class)) {
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
      boolean ipv6 = !(remote.getAddress() instanceof Inet4Address);
      Slot slot = POOL.get().of(ipv6).poll();
      boolean fresh = slot == null;
      if (fresh) {
        try {
          slot =
              new Slot(
                  LinuxSocket.newSocketStream(
                      ipv6 ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET),
                  loop,
                  ipv6);
        } catch (RuntimeException e) { // out of file descriptors
          context.emit(e, done::fail);
          return;
        }
      }
      EpollConnection connection = new EpollConnection(slot, context);
      slot.current = connection;
      Slot on = slot;
      context.emit(
          null,
          v -> {
            LinuxSocket socket = on.socket;
            try {
              if (fresh) {
                socket.setTcpNoDelay(true);
              }
              if (quickAckOff) {
                socket.setIntOpt(IPPROTO_TCP, TCP_QUICKACK, 0);
              }
              boolean connected = socket.connect(remote);
              if (fresh) {
                Future<IoRegistration> registered = loop.register(on);
                if (!registered.isSuccess()) {
                  throw new IOException("epoll registration failed", registered.cause());
                }
                on.registration = registered.getNow();
                on.registration.submit(INTEREST);
              }
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
