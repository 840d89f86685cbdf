package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import java.util.List;
import java.util.Map;

/**
 * Where a pool's EndpointSlices go and what every one of them carries besides its endpoints.
 *
 * @param serviceLabels the Service's own labels, copied onto every slice
 * @param headless the Service has {@code clusterIP: None}
 * @param topologyHints the Service asks for topology-aware routing ({@code trafficDistribution})
 * @param ports slice ports: name and protocol of the Service port, number of the Pod port
 */
public record SliceTarget(
    String namespace,
    String serviceName,
    Map<String, String> serviceLabels,
    boolean headless,
    boolean topologyHints,
    OwnerReference owner,
    List<EndpointPort> ports,
    int maxEndpointsPerSlice) {

  public SliceTarget {
    serviceLabels = Map.copyOf(serviceLabels);
    ports = List.copyOf(ports);
    if (maxEndpointsPerSlice < 1) {
      throw new IllegalArgumentException("maxEndpointsPerSlice must be >= 1");
    }
  }
}
