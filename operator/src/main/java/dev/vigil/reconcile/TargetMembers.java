package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPoolSpec;
import dev.vigil.api.v1alpha1.BackendTarget;
import dev.vigil.api.v1alpha1.PoolPort;
import dev.vigil.health.AdminState;
import dev.vigil.runtime.Member;
import dev.vigil.targets.ResolvedName;
import dev.vigil.targets.TargetNetworks;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.netty.util.NetUtil;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a pool's {@code spec.targets} into runtime members, pure: a static address is one member
 * named by the address; a hostname is one member per address it resolves to (kept or fresh), named
 * {@code hostname/address}. An address listed twice (by two entries, or by an entry and a name) is
 * one backend, the first entry's: passive outcomes name a backend by its address. Every target
 * serves the pool's ports at their numeric {@code targetPort} (or {@code port}).
 */
public final class TargetMembers {
  private TargetMembers() {}

  /**
   * @param probePort {@code active.port}: a number, the name of a pool port, or null for the first
   * @param names the pool's hostnames as resolved now
   * @param adminStates {@code spec.adminStates} by name: an address, a hostname (all its addresses)
   *     or {@code hostname/address}; the stricter where several apply
   */
  public static List<Member> members(
      List<BackendTarget> targets,
      List<PoolPort> ports,
      IntOrString probePort,
      Map<String, ResolvedName> names,
      Map<String, AdminState> adminStates,
      TargetNetworks refused) {
    int probe = probePort(ports, probePort);
    List<Integer> numbers = ports.stream().map(TargetMembers::number).toList();
    List<Member> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (BackendTarget t : targets) {
      if (t.getAddress() != null) {
        String ip = t.getAddress();
        if (!refused.refuses(ip) && seen.add(ip)) {
          AdminState admin = adminStates.getOrDefault(ip, AdminState.UP);
          out.add(Member.target(ip, ip, probe, t.getZone(), numbers, admin, null));
        }
        continue;
      }
      ResolvedName name = names.get(t.getHostname());
      if (name == null) {
        continue;
      }
      for (String ip : name.addresses()) {
        String id = t.getHostname() + "/" + ip;
        if (!refused.refuses(ip) && seen.add(ip)) {
          AdminState admin =
              adminStates
                  .getOrDefault(id, AdminState.UP)
                  .strictest(adminStates.getOrDefault(t.getHostname(), AdminState.UP))
                  .strictest(adminStates.getOrDefault(ip, AdminState.UP));
          out.add(Member.target(id, ip, probe, t.getZone(), numbers, admin, name.describe()));
        }
      }
    }
    return out;
  }

  /** For status: each answer of a hostname that is in a refused network (not a backend). */
  public static List<String> refusedAnswers(
      Map<String, ResolvedName> names, TargetNetworks refused) {
    List<String> out = new ArrayList<>();
    for (ResolvedName n : names.values()) {
      for (String ip : n.addresses()) {
        if (refused.refuses(ip)) {
          out.add(
              "hostname "
                  + n.hostname()
                  + " answered "
                  + ip
                  + ", in a network the operator refuses (--refuse-target-networks): not a"
                  + " backend");
        }
      }
    }
    return out;
  }

  /** The hostnames of the targets, in order, once each. */
  public static List<String> hostnames(List<BackendTarget> targets) {
    return targets == null
        ? List.of()
        : targets.stream()
            .map(BackendTarget::getHostname)
            .filter(h -> h != null)
            .distinct()
            .toList();
  }

  /**
   * Why the pool's backends are not valid, naming the field; null when they are. The CRD's rules
   * say the same where the API server checks them; this is for objects that bypassed them.
   */
  public static String invalid(
      BackendPoolSpec spec, IntOrString probePort, TargetNetworks refused) {
    boolean selector = spec.getSelector() != null;
    boolean targets = spec.getTargets() != null;
    if (selector == targets) {
      return "a pool has exactly one of spec.selector and spec.targets";
    }
    if (!targets) {
      return null;
    }
    List<BackendTarget> list = spec.getTargets();
    if (list.isEmpty()) {
      return "spec.targets must have at least one entry";
    }
    if (hostnames(list).size() > BackendPoolSpec.MAX_HOSTNAMES) {
      return "spec.targets has more than " + BackendPoolSpec.MAX_HOSTNAMES + " hostnames";
    }
    for (int i = 0; i < list.size(); i++) {
      String problem = invalid(list.get(i), refused);
      if (problem != null) {
        return "spec.targets[" + i + "]" + problem;
      }
    }
    for (int i = 0; i < spec.getPorts().size(); i++) {
      if (number(spec.getPorts().get(i)) <= 0) {
        return "spec.ports["
            + i
            + "].targetPort must be a number with spec.targets (a target has"
            + " no container ports to name)";
      }
    }
    if (probePort(spec.getPorts(), probePort) <= 0) {
      return "the HealthPolicy's active.port "
          + probePort.getStrVal()
          + " names no spec.ports[].name";
    }
    return null;
  }

  private static String invalid(BackendTarget t, TargetNetworks refused) {
    if ((t.getAddress() == null) == (t.getHostname() == null)) {
      return " must have exactly one of address and hostname";
    }
    if (t.getAddress() != null
        && !NetUtil.isValidIpV4Address(t.getAddress())
        && !NetUtil.isValidIpV6Address(t.getAddress())) {
      return ".address '" + t.getAddress() + "' is not an IPv4 or IPv6 address";
    }
    if (t.getAddress() != null && refused.refuses(t.getAddress())) {
      return ".address "
          + t.getAddress()
          + " is in a network the operator refuses (--refuse-target-networks "
          + String.join(",", refused.cidrs())
          + ")";
    }
    return null;
  }

  private static int number(PoolPort p) {
    IntOrString target = p.getTargetPort();
    if (target == null) {
      return p.getPort() == null ? -1 : p.getPort();
    }
    return target.getIntVal() == null ? -1 : target.getIntVal();
  }

  private static int probePort(List<PoolPort> ports, IntOrString probePort) {
    if (probePort == null) {
      return ports.isEmpty() ? -1 : number(ports.get(0));
    }
    if (probePort.getIntVal() != null) {
      return probePort.getIntVal();
    }
    return ports.stream()
        .filter(p -> probePort.getStrVal().equals(p.getName()))
        .mapToInt(TargetMembers::number)
        .findFirst()
        .orElse(-1);
  }
}
