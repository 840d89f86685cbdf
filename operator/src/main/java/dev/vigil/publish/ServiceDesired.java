package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The selector-less Service Vigil creates for a pool when {@code service.manage} is on. */
public final class ServiceDesired {
  public static final String LABEL_POOL = "vigil.dev/pool";

  private ServiceDesired() {}

  /** A selector-less ClusterIP Service with a numeric {@code targetPort} per pool port. */
  public static Service build(
      String namespace, String name, String pool, OwnerReference owner, List<ServicePort> ports) {
    return new ServiceBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .withName(name)
        .withLabels(Map.of(LABEL_POOL, pool))
        .withOwnerReferences(owner)
        .endMetadata()
        .withNewSpec()
        .withType("ClusterIP")
        .withPorts(
            ports.stream()
                .map(
                    p ->
                        new ServicePortBuilder()
                            .withName(p.name())
                            .withPort(p.port())
                            .withTargetPort(new IntOrString(p.targetPort()))
                            .withProtocol(p.protocol())
                            .build())
                .toList())
        .endSpec()
        .build();
  }

  /** True when the live Service's ports already say what the desired ones say. */
  public static boolean samePorts(Service live, Service desired) {
    List<io.fabric8.kubernetes.api.model.ServicePort> a = live.getSpec().getPorts();
    List<io.fabric8.kubernetes.api.model.ServicePort> b = desired.getSpec().getPorts();
    if (a == null || a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      var x = a.get(i);
      var y = b.get(i);
      if (!Objects.equals(x.getName(), y.getName())
          || !Objects.equals(x.getPort(), y.getPort())
          || !Objects.equals(x.getTargetPort(), y.getTargetPort())
          || !Objects.equals(x.getProtocol(), y.getProtocol())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The slice ports (docs/design.md §3): name and protocol of the Service port, number of the Pod
   * port.
   */
  public static List<EndpointPort> slicePorts(List<ServicePort> ports) {
    return ports.stream()
        .map(
            p ->
                new EndpointPortBuilder()
                    .withName(p.name())
                    .withProtocol(p.protocol())
                    .withPort(p.targetPort())
                    .build())
        .toList();
  }
}
