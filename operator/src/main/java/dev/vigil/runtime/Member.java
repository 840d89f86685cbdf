package dev.vigil.runtime;

/**
 * A Pod of a pool as the runtime sees it: where to probe it and how to publish it.
 *
 * @param id stable backend id within the pool (the Pod name)
 * @param ip the Pod IP (members without an IP are not backends yet)
 * @param probePort the Pod port the active check targets
 * @param terminating the Pod has a deletion timestamp: draining, published as terminating
 * @param notReady the kubelet reports the Pod not Ready and the pool respects readiness: draining
 */
public record Member(
    String id,
    String podUid,
    String ip,
    int probePort,
    String nodeName,
    String zone,
    boolean terminating,
    boolean notReady) {

  public boolean draining() {
    return terminating || notReady;
  }
}
