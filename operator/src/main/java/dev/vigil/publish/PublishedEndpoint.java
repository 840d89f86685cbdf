package dev.vigil.publish;

/**
 * One backend as it appears in an EndpointSlice: its address, the Pod it belongs to, and the three
 * conditions, always explicit (DESIGN §3).
 */
public record PublishedEndpoint(
    String ip,
    String podName,
    String podUid,
    String nodeName,
    String zone,
    boolean ready,
    boolean serving,
    boolean terminating) {

  /**
   * The ready/serving/terminating table of DESIGN §3.
   *
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
      boolean podTerminating) {
    if (podTerminating) {
      return new PublishedEndpoint(ip, podName, podUid, nodeName, zone, false, healthy, true);
    }
    return new PublishedEndpoint(ip, podName, podUid, nodeName, zone, published, published, false);
  }

  /** IPv6 when the address holds a colon. */
  public boolean ipv6() {
    return ip.indexOf(':') >= 0;
  }
}
