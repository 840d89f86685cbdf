package dev.vigil.targets;

import io.netty.util.NetUtil;
import java.net.InetSocketAddress;
import java.util.function.Function;

/**
 * The admin's settings for {@code spec.targets}: the nameserver hostname targets are resolved with
 * ({@code --dns-server}; null: {@code /etc/resolv.conf}'s) and the networks no target may be in
 * ({@code --refuse-target-networks}).
 */
public record TargetSettings(InetSocketAddress dnsServer, TargetNetworks refused) {
  /** As the flags' defaults. */
  public static final TargetSettings DEFAULT = new TargetSettings(null, TargetNetworks.parse(null));

  /**
   * @param get a flag's value by name (without {@code --}), or null when not given
   */
  public static TargetSettings parse(Function<String, String> get) {
    return new TargetSettings(
        dnsServer(get.apply("dns-server")),
        TargetNetworks.parse(get.apply("refuse-target-networks")));
  }

  /** {@code IP:PORT} or {@code [IPv6]:PORT}; blank: null. */
  private static InetSocketAddress dnsServer(String v) {
    if (v == null || v.isBlank()) {
      return null;
    }
    int colon = v.lastIndexOf(':');
    String host = colon < 0 ? "" : v.substring(0, colon).replace("[", "").replace("]", "");
    int port = -1;
    try {
      port = Integer.parseInt(v.substring(colon + 1));
    } catch (NumberFormatException | IndexOutOfBoundsException e) {
      // reported below
    }
    if (colon < 0
        || port < 1
        || port > 65535
        || !(NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host))) {
      throw new IllegalArgumentException(
          "--dns-server must be IP:PORT (an IPv6 address in brackets), got " + v);
    }
    return new InetSocketAddress(host, port);
  }
}
