package dev.vigil.demo;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;

/**
 * The example Deployment's Pods, made from its Pod template as its ReplicaSet would: Running and
 * Ready, each at the address of one demo backend, every container port set to the backends' one
 * shared port.
 */
final class DemoPods {
  private static final String TEMPLATE_HASH = "5f7c9d8b6";

  private final DemoExamples examples;
  private final String namespace;
  private final int port;

  DemoPods(DemoExamples examples, String namespace, int port) {
    this.examples = examples;
    this.namespace = namespace;
    this.port = port;
  }

  /** Pod i of the Deployment, Running and Ready at backend i's address. */
  Pod pod(int i) {
    var template = examples.deployment().getSpec().getTemplate();
    String name =
        String.format(
            "%s-%s-%05d", examples.deployment().getMetadata().getName(), TEMPLATE_HASH, i);
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .withUid("uid-" + name)
        .withLabels(template.getMetadata().getLabels())
        .addToLabels("pod-template-hash", TEMPLATE_HASH)
        .endMetadata()
        .withSpec(spec())
        .withNewStatus()
        .withPhase("Running")
        .withPodIP(DemoCluster.address(i))
        .withHostIP("10.0.0.1")
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  /** A copy of the template's spec on the demo's node, its container ports on the shared port. */
  private PodSpec spec() {
    var template = examples.deployment().getSpec().getTemplate();
    PodSpec spec = new PodBuilder().withSpec(template.getSpec()).build().getSpec();
    spec.setNodeName("demo-node");
    spec.getContainers()
        .forEach(
            container -> {
              if (container.getPorts() != null) {
                for (ContainerPort p : container.getPorts()) {
                  p.setContainerPort(port); // an unprivileged port: loopback addresses share it
                }
              }
            });
    return spec;
  }
}
