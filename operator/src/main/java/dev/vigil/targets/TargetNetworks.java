package dev.vigil.targets;

import io.netty.util.NetUtil;
import java.util.ArrayList;
import java.util.List;

/**
 * The networks no target may be in ({@code --refuse-target-networks}): a tenant's {@code
 * spec.targets} make the operator probe an address from its own network position and report what it
 * found in status, so by default it refuses its own loopback, link-local addresses (a cloud's
 * metadata service, 169.254.169.254), unspecified and multicast addresses. An IPv4-mapped IPv6
 * address is checked as its IPv4 address.
 */
public record TargetNetworks(List<String> cidrs) {
  public static final String DEFAULT =
      "127.0.0.0/8,::1/128,169.254.0.0/16,fe80::/10,0.0.0.0/8,::/128,224.0.0.0/4,ff00::/8";

  public static final TargetNetworks NONE = new TargetNetworks(List.of());

  public TargetNetworks {
    cidrs = List.copyOf(cidrs);
    for (String c : cidrs) {
      parseCidr(c);
    }
  }

  /** A comma-separated list of CIDRs, or {@code none}; null: {@link #DEFAULT}. */
  public static TargetNetworks parse(String list) {
    String v = list == null ? DEFAULT : list.trim();
    if (v.equals("none") || v.isEmpty()) {
      return NONE;
    }
    List<String> out = new ArrayList<>();
    for (String c : v.split(",")) {
      if (!c.isBlank()) {
        out.add(c.trim());
      }
    }
    return new TargetNetworks(out);
  }

  /** The address is in a refused network (an address that is not an IP literal is refused). */
  public boolean refuses(String ip) {
    byte[] a = bytes(ip);
    if (a == null) {
      return true;
    }
    for (String c : cidrs) {
      Object[] net = parseCidr(c);
      byte[] n = (byte[]) net[0];
      if (n.length == a.length && matches(a, n, (Integer) net[1])) {
        return true;
      }
    }
    return false;
  }

  private static boolean matches(byte[] a, byte[] net, int bits) {
    for (int i = 0; i < bits; i++) {
      int mask = 0x80 >> (i % 8);
      if ((a[i / 8] & mask) != (net[i / 8] & mask)) {
        return false;
      }
    }
    return true;
  }

  private static byte[] bytes(String ip) {
    byte[] b = NetUtil.createByteArrayFromIpAddressString(ip);
    if (b != null && b.length == 16 && mapped(b)) {
      return java.util.Arrays.copyOfRange(b, 12, 16);
    }
    return b;
  }

  private static boolean mapped(byte[] b) {
    for (int i = 0; i < 10; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
  }

  /** {address bytes, prefix bits}; throws naming the flag when it is not a CIDR. */
  private static Object[] parseCidr(String cidr) {
    int slash = cidr.indexOf('/');
    byte[] net =
        slash < 0 ? null : NetUtil.createByteArrayFromIpAddressString(cidr.substring(0, slash));
    int bits = -1;
    try {
      bits = slash < 0 ? -1 : Integer.parseInt(cidr.substring(slash + 1));
    } catch (NumberFormatException e) {
      // reported below
    }
    if (net == null || bits < 0 || bits > net.length * 8) {
      throw new IllegalArgumentException(
          "--refuse-target-networks must be CIDRs such as 10.0.0.0/8 or none, got " + cidr);
    }
    return new Object[] {net, bits};
  }
}
