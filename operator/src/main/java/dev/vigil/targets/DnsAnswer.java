package dev.vigil.targets;

import java.util.List;

/**
 * One lookup of a name: its addresses (A and AAAA, as literals) and the smallest TTL among them, or
 * why it failed.
 *
 * @param failure {@code NXDOMAIN}, {@code SERVFAIL}, {@code REFUSED}, {@code timeout}, {@code no
 *     address} or the resolver's message; null when the name resolved
 */
public record DnsAnswer(List<String> addresses, long ttlSeconds, String failure) {
  public DnsAnswer {
    addresses = List.copyOf(addresses);
  }

  public static DnsAnswer of(List<String> addresses, long ttlSeconds) {
    return new DnsAnswer(addresses, ttlSeconds, null);
  }

  public static DnsAnswer failed(String reason) {
    return new DnsAnswer(List.of(), 0, reason);
  }

  public boolean ok() {
    return failure == null;
  }
}
