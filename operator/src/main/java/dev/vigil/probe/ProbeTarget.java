package dev.vigil.probe;

import java.util.Objects;

/**
 * Where to probe: a backend's IP address (a literal, never a name to resolve) and port.
 *
 * @param ip IPv4 or IPv6 literal
 * @param port 1..65535
 */
public record ProbeTarget(String ip, int port) {

  public ProbeTarget {
    Objects.requireNonNull(ip, "ip");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be 1..65535, got " + port);
    }
  }

  /** {@code ip:port}, with brackets around an IPv6 address. */
  @Override
  public String toString() {
    return (ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip) + ":" + port;
  }
}
