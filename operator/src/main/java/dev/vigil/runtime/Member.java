package dev.vigil.runtime;

import dev.vigil.health.AdminState;
import java.util.List;

/**
 * A backend of a pool as the runtime sees it (a Pod, or a target that is not a Pod): where to probe
 * it and how to publish it.
 *
 * @param id stable backend id within the pool (the Pod name; a target's address or {@code
 *     hostname/address})
 * @param podUid the Pod's uid; null for a target
 * @param ip the Pod IP (members without an IP are not backends yet)
 * @param probePort the Pod port the active check targets
 * @param terminating the Pod has a deletion timestamp: draining, published as terminating
 * @param notReady the kubelet reports the Pod not Ready and the pool respects readiness: draining
 * @param ports the Pod port each pool port ({@code spec.ports}, in order) targets on this Pod,
 *     {@code -1} where the Pod lacks a named port; empty when not resolved
 * @param admin the operator's admin state (Pod annotation or {@code spec.adminStates}, the
 *     stricter): UP holds nothing
 * @param note a remark status shows as the backend's reason when nothing holds it: why the Pod's
 *     admin-state annotation was ignored, or that the target's hostname does not resolve (its last
 *     answer kept); null: none
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
    String note) {

  public Member {
    ports = List.copyOf(ports);
    admin = admin == null ? AdminState.UP : admin;
  }

  /** A member without an admin state or a note. */
  public static Member of(
      String id,
      String podUid,
      String ip,
      int probePort,
      String nodeName,
      String zone,
      boolean terminating,
      boolean notReady,
      List<Integer> ports) {
    return new Member(
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

  /**
   * A backend that is not a Pod ({@code spec.targets}): no uid, no node, never terminating or not
   * Ready by a kubelet.
   *
   * @param id the address, or {@code hostname/address}
   */
  public static Member target(
      String id,
      String ip,
      int probePort,
      String zone,
      List<Integer> ports,
      AdminState admin,
      String note) {
    return new Member(id, null, ip, probePort, null, zone, false, false, ports, admin, note);
  }

  /** A target has no Pod behind it. */
  public boolean pod() {
    return podUid != null;
  }

  public boolean draining() {
    return terminating || notReady;
  }
}
