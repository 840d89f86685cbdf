package dev.vigil.shard;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This replica's zone, found once at start (docs/design.md §8): {@code --zone} when given, else the
 * label {@value #LABEL} of the Node it runs on ({@code NODE_NAME}, from the downward API's {@code
 * spec.nodeName}), else "" (unknown, logged once: such a replica neither votes nor counts as
 * another zone). The Node is read with a list by name (the chart grants list and watch on Nodes,
 * not get).
 */
public final class ReplicaZone {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaZone.class);

  /** The Node label that names its zone. */
  public static final String LABEL = "topology.kubernetes.io/zone";

  private ReplicaZone() {}

  /** The zone; never null, never throws. */
  public static String resolve(ShardConfig config, KubernetesClient client) {
    if (config.zone() != null) {
      LOG.info("zone {} (--zone)", config.zone());
      return config.zone();
    }
    if (config.nodeName() == null) {
      LOG.warn("zone unknown: no --zone and no NODE_NAME; this replica will not confirm others");
      return "";
    }
    try {
      List<Node> nodes =
          client.nodes().withField("metadata.name", config.nodeName()).list().getItems();
      String zone =
          nodes.isEmpty() || nodes.get(0).getMetadata().getLabels() == null
              ? null
              : nodes.get(0).getMetadata().getLabels().get(LABEL);
      if (zone == null || zone.isBlank()) {
        LOG.warn(
            "zone unknown: Node {} {}; this replica will not confirm others",
            config.nodeName(),
            nodes.isEmpty() ? "not found" : "has no label " + LABEL);
        return "";
      }
      LOG.info("zone {} (label {} of Node {})", zone, LABEL, config.nodeName());
      return zone;
    } catch (KubernetesClientException e) {
      LOG.warn(
          "zone unknown: could not read Node {}: {} {}",
          config.nodeName(),
          e.getCode(),
          e.getMessage());
      return "";
    }
  }
}
