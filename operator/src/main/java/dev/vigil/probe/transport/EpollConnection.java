package dev.vigil.probe.transport;

import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.LinuxSocket;
import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.Completable;
import io.vertx.core.Handler;
import io.vertx.core.internal.ContextInternal;
import java.io.IOException;
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
 * <p>A socket outlives its connection when the peer closed first: it waits in its loop's {@link
 * SocketPool} for the next probe's connect (that class says how).
 *
 * <p>Everything runs on the event loop; each readiness event is handled inside one {@link
 * ContextInternal#emit} on the caller's context, so every receiver callback and the connect's
 * result run with that context current, as Vert.x's own {@code NetSocket} handlers do. Reads go
 * through one 8 KiB direct buffer and one array per event-loop thread, handed out only as far as
 * the receiver still wants them.
 */
final class EpollConnection implements ProbeConnection {

  private static final int CHUNK = IoScratch.CHUNK;
  private static final int OUT = EpollIoOps.EPOLLOUT.value();
  private static final int OUT_OR_ERR = OUT | EpollIoOps.EPOLLERR.value();

  /** {@code EPOLLHUP} (the kernel's, passed on by Netty in an event's ops; it has no constant). */
  private static final int HUP = 0x10;

  /**
   * How long a {@linkplain #finish() finished} connection waits for its peer's close before it
   * closes first (a FIN); a peer that honours {@code Connection: close} closes within microseconds.
   */
  static final long DRAIN_MS = 1000;

  private final EpollSlot slot;
  private final LinuxSocket socket;
  final ContextInternal context;
  final IoEventLoop loop;
  final Handler<EpollIoEvent> onEvent = e -> ready(e.ops().value());
  private Completable<ProbeConnection> connecting;
  private ScheduledFuture<?> connectTimeout;
  private Receiver receiver;
  private byte[] unsent;
  private boolean closed;
  private boolean peerClosed;
  private boolean broken;
  private boolean draining;
  long drainUntil;

  EpollConnection(EpollSlot slot, ContextInternal context) {
    this.slot = slot;
    this.socket = slot.socket;
    this.context = context;
    this.loop = slot.loop;
  }

  /** The socket with its registration (for tests). */
  EpollSlot slot() {
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
    IoScratch scratch = IoScratch.current();
    ByteBuffer direct = scratch.direct();
    while (!closed) {
      int n;
      try {
        n = socket.recv(direct, 0, CHUNK);
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
        direct.get(0, scratch.array, 0, n);
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
    ByteBuffer direct = IoScratch.current().direct();
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
   * close in time, or too many waiting on this loop ({@link SocketPool#POOLED}), gets the FIN.
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
    SocketPool pool = SocketPool.current();
    if (peerClosed
        || broken
        || connecting != null
        || slot.shut
        || pool.draining.size() >= SocketPool.POOLED) {
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
    ByteBuffer direct = IoScratch.current().direct();
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
  void endDrain(boolean peerClosedCleanly) {
    draining = false;
    SocketPool.current()
        .draining
        .removeFirstOccurrence(this); // most often the head: peers close in order
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
      ArrayDeque<EpollSlot> idle = SocketPool.current().of(slot.ipv6);
      if (idle.size() < SocketPool.POOLED) {
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

  /**
   * Waits for a connect under way: its outcome comes with {@code EPOLLOUT} or {@code EPOLLERR}, or
   * the timeout fails it.
   */
  void awaitConnect(Completable<ProbeConnection> done, int timeoutMs, InetSocketAddress remote) {
    connecting = done;
    connectTimeout =
        loop.schedule(
            () -> context.emit(null, x -> timedOut(timeoutMs, remote)),
            timeoutMs,
            TimeUnit.MILLISECONDS);
  }

  /** Fails a connect that could not even start (a socket option, the connect call, epoll). */
  void failConnect(Completable<ProbeConnection> done, Throwable failure) {
    connecting = done;
    connectFailed(failure);
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
