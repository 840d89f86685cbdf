package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.AdminStateEntry;
import dev.vigil.api.v1alpha1.PoolPort;
import dev.vigil.health.AdminState;
import dev.vigil.publish.ServicePort;
import dev.vigil.runtime.Member;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a pool's Pods into runtime members and resolves its ports, pure: Pods without an IP are not
 * backends yet, finished Pods (phase Succeeded or Failed) never again, terminating Pods drain, and
 * (with {@code respectPodReadiness}) Pods the kubelet reports not Ready drain too.
 */
public final class PoolMembers {
  public static final String ZONE_LABEL = "topology.kubernetes.io/zone";

  private PoolMembers() {}

  /**
   * @param probePort {@code active.port}: a number, a port name, or null for the first pool port
   * @param nodeZones zone of each node, where known
   */
  public static List<Member> members(
      List<Pod> pods,
      List<PoolPort> ports,
      IntOrString probePort,
      boolean respectPodReadiness,
      Map<String, String> nodeZones) {
    return members(pods, ports, probePort, respectPodReadiness, nodeZones, Map.of());
  }

  /**
   * As above, with each member's admin state: the Pod annotation {@link AdminState#ANNOTATION} and
   * the pool's {@code spec.adminStates} entry for it, the stricter of the two (docs/decision.md).
   *
   * @param adminStates the pool's entries by Pod name ({@link #adminStates})
   */
  public static List<Member> members(
      List<Pod> pods,
      List<PoolPort> ports,
      IntOrString probePort,
      boolean respectPodReadiness,
      Map<String, String> nodeZones,
      Map<String, AdminState> adminStates) {
    List<Member> out = new ArrayList<>();
    for (Pod pod : pods) {
      String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
      if (ip == null || ip.isEmpty() || finished(pod)) {
        continue;
      }
      int port = probePort(pod, ports, probePort);
      if (port <= 0) {
        continue;
      }
      String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
      out.add(
          new Member(
              name(pod),
              pod.getMetadata().getUid(),
              ip,
              port,
              node,
              node == null ? null : nodeZones.get(node),
              pod.getMetadata().getDeletionTimestamp() != null,
              respectPodReadiness && !ready(pod),
              targetPorts(pod, ports),
              annotated(pod).strictest(adminStates.getOrDefault(name(pod), AdminState.UP)),
              annotationError(pod)));
    }
    return out;
  }

  private static String name(Pod pod) {
    return pod.getMetadata().getName();
  }

  /** The pool's {@code spec.adminStates} by Pod name; the stricter where a Pod is named twice. */
  public static Map<String, AdminState> adminStates(List<AdminStateEntry> entries) {
    Map<String, AdminState> out = new HashMap<>();
    if (entries == null) {
      return out;
    }
    for (AdminStateEntry e : entries) {
      if (e == null || e.getPod() == null || e.getState() == null) {
        continue;
      }
      AdminState state =
          switch (e.getState()) {
            case DRAIN -> AdminState.DRAIN;
            case MAINT -> AdminState.MAINT;
            case UP, READY -> AdminState.UP;
          };
      out.merge(e.getPod(), state, AdminState::strictest);
    }
    return out;
  }

  /** The Pod's annotation {@link AdminState#ANNOTATION}; UP when absent or not an admin state. */
  static AdminState annotated(Pod pod) {
    String value = annotation(pod);
    try {
      return value == null ? AdminState.UP : AdminState.parse(ANNOTATION_FIELD, value);
    } catch (IllegalArgumentException e) {
      return AdminState.UP;
    }
  }

  /**
   * Why the Pod's admin-state annotation holds nothing, naming the annotation and the accepted
   * words (status shows it as the backend's reason), or null when it is absent or valid.
   */
  static String annotationError(Pod pod) {
    String value = annotation(pod);
    try {
      if (value != null) {
        AdminState.parse(ANNOTATION_FIELD, value);
      }
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage() + "; ignored";
    }
  }

  private static final String ANNOTATION_FIELD = "annotation " + AdminState.ANNOTATION;

  private static String annotation(Pod pod) {
    Map<String, String> a = pod.getMetadata().getAnnotations();
    return a == null ? null : a.get(AdminState.ANNOTATION);
  }

  /**
   * The Pod port each pool port targets on this Pod, in order; -1 where a named port is missing.
   */
  public static List<Integer> targetPorts(Pod pod, List<PoolPort> ports) {
    List<Integer> out = new ArrayList<>(ports.size());
    for (PoolPort p : ports) {
      out.add(targetPort(pod, p));
    }
    return out;
  }

  /** The Pod port a pool port targets on this Pod, or -1 when a named port is missing. */
  public static int targetPort(Pod pod, PoolPort port) {
    IntOrString target =
        port.getTargetPort() == null ? new IntOrString(port.getPort()) : port.getTargetPort();
    return resolve(pod, target);
  }

  private static int probePort(Pod pod, List<PoolPort> ports, IntOrString probePort) {
    if (probePort != null) {
      return resolve(pod, probePort);
    }
    return ports.isEmpty() ? -1 : targetPort(pod, ports.get(0));
  }

  private static int resolve(Pod pod, IntOrString port) {
    if (port.getIntVal() != null) {
      return port.getIntVal();
    }
    return containerPort(pod, port.getStrVal()).orElse(-1);
  }

  private static Optional<Integer> containerPort(Pod pod, String name) {
    if (pod.getSpec() == null || pod.getSpec().getContainers() == null) {
      return Optional.empty();
    }
    for (Container c : pod.getSpec().getContainers()) {
      if (c.getPorts() == null) {
        continue;
      }
      for (ContainerPort p : c.getPorts()) {
        if (name.equals(p.getName())) {
          return Optional.of(p.getContainerPort());
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The pool's ports resolved against its Pods, for the Service Vigil manages (it needs a numeric
   * targetPort) and as the slices' port template: a named target port takes the number the first
   * Pod that declares it gives. The slices carry each Pod's own numbers ({@link #targetPorts}).
   *
   * @return empty when a named port is declared by no Pod
   */
  public static Optional<List<ServicePort>> servicePorts(List<PoolPort> ports, List<Pod> pods) {
    List<ServicePort> out = new ArrayList<>();
    for (PoolPort p : ports) {
      int target = -1;
      if (p.getTargetPort() == null || p.getTargetPort().getIntVal() != null) {
        target = p.getTargetPort() == null ? p.getPort() : p.getTargetPort().getIntVal();
      } else {
        for (Pod pod : pods) {
          if (finished(pod)) {
            continue;
          }
          target = targetPort(pod, p);
          if (target > 0) {
            break;
          }
        }
      }
      if (target <= 0) {
        return Optional.empty();
      }
      String protocol = p.getProtocol() == null ? "TCP" : p.getProtocol().name();
      out.add(new ServicePort(p.getName(), p.getPort(), target, protocol));
    }
    return Optional.of(out);
  }

  /**
   * A Pod in phase {@code Succeeded} or {@code Failed} will not run again, whatever its {@code
   * restartPolicy} (the kubelet sets a terminal phase only then), yet keeps {@code status.podIP}
   * while the network plugin may already have given that address to a new Pod in any namespace.
   * Such a Pod is never a backend: not probed (the tenant's request would reach someone else's
   * Pod), not in a slice, not in status. The rule of the upstream EndpointSlice controller's {@code
   * ShouldPodBeInEndpoints}; its older restartPolicy rules ({@code Never}: Succeeded or Failed,
   * {@code OnFailure}: Succeeded) are the cases of this one that a kubelet produces.
   */
  public static boolean finished(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  static boolean ready(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return false;
    }
    for (PodCondition c : pod.getStatus().getConditions()) {
      if ("Ready".equals(c.getType())) {
        return "True".equals(c.getStatus());
      }
    }
    return false;
  }
}
