package dev.vigil.reconcile;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * What Vigil reads of a Pod, and nothing else (issue 31, item 4): a typed copy with name,
 * namespace, uid, resourceVersion, labels, deletion timestamp, node, hostNetwork, restartPolicy,
 * each container's named ports (name, number, protocol), the Pod's IP, phase, and each condition's
 * type and status. Annotations, managedFields, owner references, volumes, env, probes, images,
 * container statuses and timestamps are dropped, so a cached Pod's size does not depend on what a
 * tenant puts in those (256 KiB of annotations per Pod cost nothing here).
 *
 * <p>Meant as the transform before the Pod informer's store (JOSDK's {@code
 * TransformingItemStore}); {@code PodProjectionTest} measures it. Not wired yet: the earlier
 * reduced store (Fabric8's {@code ReducedStateItemStore}, commit 04f0603) made replicas started
 * while pools existed publish empty slices in {@code ShardingE2E}, and that cause is not found yet
 * (docs/scale.md).
 */
public final class PodProjection {
  private PodProjection() {}

  /** A new Pod holding only what Vigil reads of {@code pod}; {@code pod} is not changed. */
  public static Pod of(Pod pod) {
    var meta = pod.getMetadata();
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withName(meta.getName())
            .withNamespace(shared(meta.getNamespace()))
            .withUid(meta.getUid())
            .withResourceVersion(meta.getResourceVersion())
            .withDeletionTimestamp(meta.getDeletionTimestamp())
            .withLabels(labels(meta.getLabels()))
            .endMetadata();
    if (pod.getSpec() != null) {
      b.withNewSpec()
          .withNodeName(shared(pod.getSpec().getNodeName()))
          .withHostNetwork(pod.getSpec().getHostNetwork())
          .withRestartPolicy(shared(pod.getSpec().getRestartPolicy()))
          .withContainers(containers(pod.getSpec().getContainers()))
          .endSpec();
    }
    if (pod.getStatus() != null) {
      b.withNewStatus()
          .withPodIP(pod.getStatus().getPodIP())
          .withPhase(shared(pod.getStatus().getPhase()))
          .withConditions(conditions(pod.getStatus().getConditions()))
          .endStatus();
    }
    return b.build();
  }

  /**
   * One instance of a string that many Pods repeat (namespaces, node names, label keys and values,
   * port names, condition types): the JVM's string table, so thousands of cached Pods share them.
   */
  private static String shared(String s) {
    return s == null ? null : s.intern();
  }

  private static java.util.Map<String, String> labels(java.util.Map<String, String> labels) {
    if (labels == null) {
      return null;
    }
    java.util.Map<String, String> out = new LinkedHashMap<>(labels.size() * 2);
    labels.forEach((k, v) -> out.put(shared(k), shared(v)));
    return out;
  }

  /** Each container with its named ports only (what named target ports resolve against). */
  private static List<Container> containers(List<Container> containers) {
    if (containers == null) {
      return null;
    }
    List<Container> out = new ArrayList<>(containers.size());
    for (Container c : containers) {
      List<ContainerPort> ports = new ArrayList<>();
      if (c.getPorts() != null) {
        for (ContainerPort p : c.getPorts()) {
          ports.add(
              new ContainerPortBuilder()
                  .withName(shared(p.getName()))
                  .withContainerPort(p.getContainerPort())
                  .withProtocol(shared(p.getProtocol()))
                  .build());
        }
      }
      out.add(new ContainerBuilder().withName(shared(c.getName())).withPorts(ports).build());
    }
    return out;
  }

  private static List<PodCondition> conditions(List<PodCondition> conditions) {
    if (conditions == null) {
      return null;
    }
    List<PodCondition> out = new ArrayList<>(conditions.size());
    for (PodCondition c : conditions) {
      out.add(
          new PodConditionBuilder()
              .withType(shared(c.getType()))
              .withStatus(shared(c.getStatus()))
              .build());
    }
    return out;
  }
}
