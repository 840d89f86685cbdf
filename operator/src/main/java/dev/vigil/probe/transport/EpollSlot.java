package dev.vigil.probe.transport;

import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.LinuxSocket;
import io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A socket with its epoll registration, kept across probes: the connection on it now, or none while
 * it waits in its loop's pool.
 */
final class EpollSlot implements EpollIoHandle {
  final LinuxSocket socket;
  final IoEventLoop loop;
  final boolean ipv6;

  /** The local address the socket is bound to ({@link SourceAddress}), null when none. */
  final InetSocketAddress source;

  IoRegistration registration;
  EpollConnection current;
  boolean shut;

  EpollSlot(LinuxSocket socket, IoEventLoop loop, boolean ipv6, InetSocketAddress source) {
    this.socket = socket;
    this.loop = loop;
    this.ipv6 = ipv6;
    this.source = source;
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
   * What Netty calls when the loop shuts down with the socket still registered: ends the connection
   * on it, if any, and closes the socket either way (nothing goes back to the pool).
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
