package dev.vigil.runtime;

import dev.vigil.health.AdminState;
import java.util.List;

/**
 * A Pod of a pool as the runtime sees it: where to probe it and how to publish it.
 *
 * @param id stable backend id within the pool (the Pod name)
 * @param ip the Pod IP (members without an IP are not backends yet)
 * @param probePort the Pod port the active check targets
 * @param terminating the Pod has a deletion timestamp: draining, published as terminating
 * @param notReady the kubelet reports the Pod not Ready and the pool respects readiness: draining
 * @param ports the Pod port each pool port ({@code spec.ports}, in order) targets on this Pod,
 *     {@code -1} where the Pod lacks a named port; empty when not resolved
 * @param admin the operator's admin state (Pod annotation or {@code spec.adminStates}, the
 *     stricter): UP holds nothing
 * @param adminError why the Pod's admin-state annotation was ignored (status shows it), or null
 */
public record Member(
    String id,
    String podUid,
    String ip,
    int probePort,
    String nodeName,
    String zone,
    boolean terminating,
    boolean notReady,
    List<Integer> ports,
    AdminState admin,
    String adminError) {

  public Member {
    ports = List.copyOf(ports);
    admin = admin == null ? AdminState.UP : admin;
  }

  /** A member without an admin state. */
  public Member(
      String id,
      String podUid,
      String ip,
      int probePort,
      String nodeName,
      String zone,
      boolean terminating,
      boolean notReady,
      List<Integer> ports) {
    this(
        id,
        podUid,
        ip,
        probePort,
        nodeName,
        zone,
        terminating,
        notReady,
        ports,
        AdminState.UP,
        null);
  }

  public boolean draining() {
    return terminating || notReady;
  }
}
