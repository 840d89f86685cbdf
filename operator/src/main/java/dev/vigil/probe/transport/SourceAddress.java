package dev.vigil.probe.transport;

import io.netty.util.NetUtil;
import io.vertx.core.net.ClientOptionsBase;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * The local address every active probe binds its end of the connection to ({@code
 * --probe-source-address}), or {@link #KERNEL}: none, the kernel picks by route. A checker bound to
 * its own address can be told apart at the backends and cut off alone by a firewall rule, which is
 * how the quorum E2E test takes one zone's checker off the network (issue 32).
 *
 * <p>Every transport binds to it: the bare sockets of plain HTTP and TCP ({@link EpollConnector},
 * {@link ChannelConnection}), Vert.x's {@code NetClient} for TLS ({@link NetSocketConnection}), and
 * the HTTP/2 and gRPC clients ({@link #applyTo}). The address must be of the Pods' IP family: a
 * probe of a Pod of the other family fails to connect.
 *
 * @param address null for {@link #KERNEL}
 */
public record SourceAddress(InetAddress address) {

  /** No binding: the kernel picks the source address by route, as without the flag. */
  public static final SourceAddress KERNEL = new SourceAddress(null);

  /**
   * An IP literal (never resolved) that can serve as a source: not the wildcard, not multicast.
   *
   * @throws IllegalArgumentException saying what is wrong with {@code value} (the caller adds the
   *     flag's name)
   */
  public static SourceAddress parse(String value) {
    InetAddress address = NetUtil.createInetAddressFromIpAddressString(value.trim());
    if (address == null) {
      throw new IllegalArgumentException("must be an IPv4 or IPv6 address, got " + value);
    }
    if (address.isAnyLocalAddress() || address.isMulticastAddress()) {
      throw new IllegalArgumentException(
          "must be a unicast address of this host (leave it unset to let the kernel pick), got "
              + value);
    }
    return new SourceAddress(address);
  }

  /**
   * Checks that a socket can bind to the address here, so a wrong one stops the start instead of
   * failing every probe (which would take every backend Down).
   *
   * @throws IllegalArgumentException with the kernel's reason
   */
  public SourceAddress requireBindable() {
    if (address == null) {
      return this;
    }
    try (Socket socket = new Socket()) {
      socket.bind(new InetSocketAddress(address, 0));
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "must be an address of this host, got "
              + address.getHostAddress()
              + " ("
              + e.getMessage()
              + ")");
    }
    return this;
  }

  public boolean given() {
    return address != null;
  }

  /** The address with port 0 (any free port), for a socket's bind; null for {@link #KERNEL}. */
  InetSocketAddress socketAddress() {
    return address == null ? null : new InetSocketAddress(address, 0);
  }

  /** Sets the local address of a Vert.x client's options (unchanged for {@link #KERNEL}). */
  public <T extends ClientOptionsBase> T applyTo(T options) {
    if (address != null) {
      options.setLocalAddress(address.getHostAddress());
    }
    return options;
  }

  @Override
  public String toString() {
    return address == null ? "kernel's choice" : address.getHostAddress();
  }
}
