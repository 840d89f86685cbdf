package dev.vigil.publish;

import java.util.List;

/**
 * One backend as it appears in an EndpointSlice: its address, the Pod it belongs to, the three
 * conditions, always explicit (docs/design.md §3), and its ports.
 *
 * @param ports the Pod port of each of the {@link SliceTarget}'s ports, in its order, {@code -1}
 *     where this Pod lacks a named port; empty: the target's own numbers
 */
public record PublishedEndpoint(
    String ip,
    String podName,
    String podUid,
    String nodeName,
    String zone,
    boolean ready,
    boolean serving,
    boolean terminating,
    List<Integer> ports) {

  public PublishedEndpoint {
    ports = List.copyOf(ports);
  }

  /**
   * The ready/serving/terminating table of docs/design.md §3.
   *
   * @param ports as {@link #ports()}
   * @param published the decision core publishes this backend (available, or any decided
   *     non-draining backend in panic)
   * @param healthy the health verdict alone: Up and not ejected
   * @param podTerminating the Pod has a deletion timestamp
   */
  public static PublishedEndpoint of(
      String ip,
      String podName,
      String podUid,
      String nodeName,
      String zone,
      boolean published,
      boolean healthy,
      boolean podTerminating,
      List<Integer> ports) {
    if (podTerminating) {
      return new PublishedEndpoint(
          ip, podName, podUid, nodeName, zone, false, healthy, true, ports);
    }
    return new PublishedEndpoint(
        ip, podName, podUid, nodeName, zone, published, published, false, ports);
  }

  /** IPv6 when the address holds a colon. */
  public boolean ipv6() {
    return ip.indexOf(':') >= 0;
  }
}
