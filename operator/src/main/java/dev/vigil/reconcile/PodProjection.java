package dev.vigil.reconcile;

import dev.vigil.health.AdminState;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What Vigil reads of a Pod, and nothing else (issue 31, item 4): a typed copy with name,
 * namespace, uid, resourceVersion, labels, deletion timestamp, node, hostNetwork, restartPolicy,
 * the named ports of each container that has any (name, number, protocol), the Pod's IP, phase, and
 * its {@code Ready} condition (type and status: what {@code PoolMembers.ready} reads), and the one
 * annotation {@code vigil.dev/admin-state} (cut to 16 characters). Other annotations,
 * managedFields, owner references, volumes, env, probes, images, container statuses and timestamps
 * are dropped, so a cached Pod's size does not depend on what a tenant puts in those (256 KiB of
 * annotations per Pod cost nothing here). Fabric8's model objects allocate every list and map field
 * up front (a PodSpec alone has a dozen, each object an {@code additionalProperties} map): the
 * projection sets those it leaves empty to null ({@link EmptyFields}), which takes the heap per
 * cached Pod from 3.9 KB to 1.8 KB ({@code PodCacheMemory 20000 projected}). Read a cached Pod as
 * {@code PoolMembers} does: a list Vigil does not keep is null, not empty.
 *
 * <p>The transform before the Pod informer's store (JOSDK's {@code TransformingItemStore}, one per
 * informer: {@link StorePerInformer} says why the earlier reduced store, commit 04f0603, lost Pods
 * after a restart); {@code PodProjectionTest} and {@code dev.vigil.bench.PodCacheMemory} measure
 * it.
 */
public final class PodProjection {
  private PodProjection() {}

  /** A new Pod holding only what Vigil reads of {@code pod}; {@code pod} is not changed. */
  public static Pod of(Pod pod) {
    Pod out = new Pod();
    out.setMetadata(metadata(pod.getMetadata()));
    if (pod.getSpec() != null) {
      PodSpec spec = new PodSpec();
      spec.setNodeName(shared(pod.getSpec().getNodeName()));
      spec.setHostNetwork(pod.getSpec().getHostNetwork());
      spec.setRestartPolicy(shared(pod.getSpec().getRestartPolicy()));
      spec.setContainers(containers(pod.getSpec().getContainers()));
      out.setSpec(spec);
    }
    if (pod.getStatus() != null) {
      PodStatus status = new PodStatus();
      status.setPodIP(pod.getStatus().getPodIP());
      status.setPhase(shared(pod.getStatus().getPhase()));
      status.setConditions(ready(pod.getStatus().getConditions()));
      out.setStatus(status);
    }
    return compact(out);
  }

  private static ObjectMeta metadata(ObjectMeta meta) {
    ObjectMeta out = new ObjectMeta();
    out.setName(meta.getName());
    out.setNamespace(shared(meta.getNamespace()));
    out.setUid(meta.getUid());
    out.setResourceVersion(meta.getResourceVersion());
    out.setDeletionTimestamp(meta.getDeletionTimestamp());
    out.setLabels(labels(meta.getLabels()));
    out.setAnnotations(adminState(meta.getAnnotations()));
    return out;
  }

  /** Longest admin-state annotation value kept; a longer one is cut (and then fails to parse). */
  static final int ADMIN_STATE_MAX = 16;

  /**
   * The one annotation Vigil reads, {@link AdminState#ANNOTATION}, cut to {@link #ADMIN_STATE_MAX}
   * characters; null when absent, so other annotations cost nothing.
   */
  private static Map<String, String> adminState(Map<String, String> annotations) {
    String value = annotations == null ? null : annotations.get(AdminState.ANNOTATION);
    if (value == null) {
      return null;
    }
    String kept = value.length() > ADMIN_STATE_MAX ? value.substring(0, ADMIN_STATE_MAX) : value;
    return Map.of(AdminState.ANNOTATION, shared(kept));
  }

  /** Each object of the projection with its empty lists and maps set to null. */
  private static Pod compact(Pod pod) {
    EmptyFields.clear(pod);
    EmptyFields.clear(pod.getMetadata());
    if (pod.getSpec() != null) {
      pod.getSpec().getContainers().forEach(EmptyFields::clear);
      EmptyFields.clear(pod.getSpec());
    }
    if (pod.getStatus() != null) {
      EmptyFields.clear(pod.getStatus());
    }
    return pod;
  }

  /**
   * One instance of a string that many Pods repeat (namespaces, node names, label keys and values,
   * port names, condition types): the JVM's string table, so thousands of cached Pods share them.
   */
  private static String shared(String s) {
    return s == null ? null : s.intern();
  }

  private static Map<String, String> labels(Map<String, String> labels) {
    if (labels == null) {
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>(labels.size() * 2);
    labels.forEach((k, v) -> out.put(shared(k), shared(v)));
    return out;
  }

  /** The containers that declare ports, each with its ports only (named target ports need them). */
  private static List<Container> containers(List<Container> containers) {
    if (containers == null) {
      return null;
    }
    List<Container> out = new ArrayList<>(1);
    for (Container c : containers) {
      if (c.getPorts() == null || c.getPorts().isEmpty()) {
        continue;
      }
      List<ContainerPort> ports = new ArrayList<>(c.getPorts().size());
      for (ContainerPort p : c.getPorts()) {
        ContainerPort port = new ContainerPort();
        port.setName(shared(p.getName()));
        port.setContainerPort(p.getContainerPort());
        port.setProtocol(shared(p.getProtocol()));
        EmptyFields.clear(port);
        ports.add(port);
      }
      Container container = new Container();
      container.setName(shared(c.getName()));
      container.setPorts(ports);
      out.add(container);
    }
    return out;
  }

  /** The Ready condition alone (type and status), or an empty list. */
  private static List<PodCondition> ready(List<PodCondition> conditions) {
    if (conditions == null) {
      return null;
    }
    for (PodCondition c : conditions) {
      if ("Ready".equals(c.getType())) {
        PodCondition ready = new PodCondition();
        ready.setType("Ready");
        ready.setStatus(shared(c.getStatus()));
        EmptyFields.clear(ready);
        return List.of(ready);
      }
    }
    return List.of();
  }
}
