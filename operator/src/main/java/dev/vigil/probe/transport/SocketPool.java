package dev.vigil.probe.transport;

import dev.vigil.probe.ProbeScheduler;
import io.netty.channel.IoEventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The {@link EpollConnection}s' sockets of one event loop: the idle ones, and its finished
 * connections waiting for their peers' close (oldest first; one timer per loop closes those past
 * {@link EpollConnection#DRAIN_MS}).
 *
 * <p>A socket outlives its connection when the peer closed first (the usual end of an HTTP check
 * and of a TCP check whose server hangs up): {@code connect(AF_UNSPEC)} resets it (a reset to a
 * peer that has already closed: no application sees it, and neither side keeps a {@code
 * TIME_WAIT}), and it waits in its loop's pool, still registered with {@code EPOLLIN | EPOLLOUT |
 * EPOLLRDHUP} edge-triggered, for the next probe's connect: a new handshake from a new ephemeral
 * port, without a new socket, socket option, address query or {@code epoll_ctl} (5 system calls a
 * probe fewer; {@code bench/profiles/syscalls-reuse.md}). After a whole answer to a request that
 * said {@code Connection: close} ({@link EpollConnection#finish}) the socket waits for that close,
 * up to {@link EpollConnection#DRAIN_MS}. Any other end (the probe closes first, an error, a
 * timeout, a peer that does not close in time) closes the socket with a FIN, as before; the kernel
 * drops it from the epoll set with the file descriptor, before the registration is cancelled.
 */
final class SocketPool {
  /**
   * Idle sockets kept per event loop and address family: as many as a loop has probes unanswered at
   * most ({@link ProbeScheduler#MAX_BACKLOG}), so a steady load opens no new ones.
   */
  static final int POOLED = ProbeScheduler.MAX_BACKLOG;

  private static final FastThreadLocal<SocketPool> POOL =
      new FastThreadLocal<>() {
        @Override
        protected SocketPool initialValue() {
          return new SocketPool();
        }
      };

  final ArrayDeque<EpollSlot> inet = new ArrayDeque<>();
  final ArrayDeque<EpollSlot> inet6 = new ArrayDeque<>();
  final ArrayDeque<EpollConnection> draining = new ArrayDeque<>();
  ScheduledFuture<?> sweep;

  ArrayDeque<EpollSlot> of(boolean ipv6) {
    return ipv6 ? inet6 : inet;
  }

  void drain(EpollConnection c) {
    draining.addLast(c);
    if (sweep == null) {
      sweep = c.loop.schedule(() -> sweep(c.loop), EpollConnection.DRAIN_MS, TimeUnit.MILLISECONDS);
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
    SocketPool pool = current();
    return pool.inet.size() + pool.inet6.size();
  }

  /** The pool of the calling event loop's thread. */
  static SocketPool current() {
    return POOL.get();
  }
}
