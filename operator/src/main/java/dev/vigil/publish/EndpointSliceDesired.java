package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZoneBuilder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds the EndpointSlices a pool should have (DESIGN §3), pure: no API calls.
 *
 * <p>Placement is sticky: an endpoint stays in the slice that already holds it, new endpoints fill
 * the lowest-numbered slices with room, and a slice is added only when all are full. So a Pod
 * joining or leaving touches one slice, not every slice after it.
 */
public final class EndpointSliceDesired {
  public static final String LABEL_SERVICE_NAME = "kubernetes.io/service-name";
  public static final String LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
  public static final String LABEL_HEADLESS = "service.kubernetes.io/headless";
  public static final String MANAGER = "vigil.dev";

  private static final String IPV4 = "IPv4";
  private static final String IPV6 = "IPv6";

  private EndpointSliceDesired() {}

  /** The name of slice {@code index} of one address family: {@code <service>-vigil-<n>}. */
  public static String sliceName(String serviceName, String addressType, int index) {
    return IPV4.equals(addressType)
        ? serviceName + "-vigil-" + index
        : serviceName + "-vigil-ipv6-" + index;
  }

  /**
   * @param target where the slices go and what they carry
   * @param endpoints every backend of the pool that has an address
   * @param current the slices Vigil wrote for this Service before (may be empty)
   * @return the desired slices, IPv4 first, each family in index order
   */
  public static List<EndpointSlice> build(
      SliceTarget target, List<PublishedEndpoint> endpoints, List<EndpointSlice> current) {
    List<PublishedEndpoint> v4 = new ArrayList<>();
    List<PublishedEndpoint> v6 = new ArrayList<>();
    for (PublishedEndpoint e : endpoints) {
      (e.ipv6() ? v6 : v4).add(e);
    }
    boolean hints = target.topologyHints() && everyReadyHasZone(endpoints);
    List<EndpointSlice> out = new ArrayList<>();
    out.addAll(buildFamily(target, IPV4, v4, current, hints));
    out.addAll(buildFamily(target, IPV6, v6, current, hints));
    return out;
  }

  private static List<EndpointSlice> buildFamily(
      SliceTarget target,
      String addressType,
      List<PublishedEndpoint> endpoints,
      List<EndpointSlice> current,
      boolean hints) {
    Map<Integer, List<PublishedEndpoint>> placed = place(target, addressType, endpoints, current);
    List<EndpointSlice> out = new ArrayList<>(placed.size());
    for (Map.Entry<Integer, List<PublishedEndpoint>> slice : placed.entrySet()) {
      List<Endpoint> items = new ArrayList<>(slice.getValue().size());
      for (PublishedEndpoint e : slice.getValue()) {
        items.add(endpoint(target, e, hints));
      }
      out.add(
          new EndpointSliceBuilder()
              .withMetadata(
                  new ObjectMetaBuilder()
                      .withName(sliceName(target.serviceName(), addressType, slice.getKey()))
                      .withNamespace(target.namespace())
                      .withLabels(labels(target))
                      .withOwnerReferences(target.owner())
                      .build())
              .withAddressType(addressType)
              .withEndpoints(items)
              .withPorts(target.ports())
              .build());
    }
    return out;
  }

  /** Slice index to its endpoints, sorted by address inside each slice. */
  private static Map<Integer, List<PublishedEndpoint>> place(
      SliceTarget target,
      String addressType,
      List<PublishedEndpoint> endpoints,
      List<EndpointSlice> current) {
    int max = target.maxEndpointsPerSlice();
    Map<String, Integer> previousSlice = previousPlacement(target, addressType, current);
    TreeMap<Integer, List<PublishedEndpoint>> placed = new TreeMap<>();
    List<PublishedEndpoint> unplaced = new ArrayList<>();
    List<PublishedEndpoint> sorted = new ArrayList<>(endpoints);
    sorted.sort(Comparator.comparing(PublishedEndpoint::ip));
    for (PublishedEndpoint e : sorted) {
      Integer index = previousSlice.get(e.ip());
      List<PublishedEndpoint> slice =
          index == null ? null : placed.computeIfAbsent(index, i -> new ArrayList<>());
      if (slice != null && slice.size() < max) {
        slice.add(e);
      } else {
        unplaced.add(e);
      }
    }
    int index = 0;
    for (PublishedEndpoint e : unplaced) {
      while (placed.containsKey(index) && placed.get(index).size() >= max) {
        index++;
      }
      placed.computeIfAbsent(index, i -> new ArrayList<>()).add(e);
    }
    placed.values().forEach(list -> list.sort(Comparator.comparing(PublishedEndpoint::ip)));
    return nonEmpty(placed);
  }

  /**
   * Drops slices that emptied. The slices after an emptied one keep their names (and so cause no
   * writes); the hole is filled first by the next new endpoint.
   */
  private static Map<Integer, List<PublishedEndpoint>> nonEmpty(
      TreeMap<Integer, List<PublishedEndpoint>> placed) {
    Map<Integer, List<PublishedEndpoint>> out = new LinkedHashMap<>();
    placed.forEach(
        (i, list) -> {
          if (!list.isEmpty()) {
            out.put(i, list);
          }
        });
    return out;
  }

  private static Map<String, Integer> previousPlacement(
      SliceTarget target, String addressType, List<EndpointSlice> current) {
    Map<String, Integer> where = new HashMap<>();
    for (EndpointSlice slice : current) {
      if (!addressType.equals(slice.getAddressType())) {
        continue;
      }
      int index = indexOf(target.serviceName(), addressType, slice.getMetadata().getName());
      if (index < 0 || slice.getEndpoints() == null) {
        continue;
      }
      for (Endpoint e : slice.getEndpoints()) {
        if (e.getAddresses() != null && !e.getAddresses().isEmpty()) {
          where.putIfAbsent(e.getAddresses().get(0), index);
        }
      }
    }
    return where;
  }

  /** The index encoded in a slice name of this family, or -1 when the name is not ours. */
  static int indexOf(String serviceName, String addressType, String name) {
    String prefix = sliceName(serviceName, addressType, 0);
    prefix = prefix.substring(0, prefix.length() - 1);
    if (name == null || !name.startsWith(prefix)) {
      return -1;
    }
    try {
      return Integer.parseInt(name.substring(prefix.length()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static Map<String, String> labels(SliceTarget target) {
    Map<String, String> labels = new TreeMap<>(target.serviceLabels());
    labels.put(LABEL_SERVICE_NAME, target.serviceName());
    labels.put(LABEL_MANAGED_BY, MANAGER);
    if (target.headless()) {
      labels.put(LABEL_HEADLESS, "");
    } else {
      labels.remove(LABEL_HEADLESS);
    }
    return labels;
  }

  private static Endpoint endpoint(SliceTarget target, PublishedEndpoint e, boolean hints) {
    EndpointBuilder b =
        new EndpointBuilder()
            .withAddresses(e.ip())
            .withNewConditions()
            .withReady(e.ready())
            .withServing(e.serving())
            .withTerminating(e.terminating())
            .endConditions()
            .withTargetRef(
                new ObjectReferenceBuilder()
                    .withKind("Pod")
                    .withNamespace(target.namespace())
                    .withName(e.podName())
                    .withUid(e.podUid())
                    .build())
            .withNodeName(e.nodeName())
            .withZone(e.zone());
    if (hints && e.zone() != null) {
      b.withNewHints().withForZones(new ForZoneBuilder().withName(e.zone()).build()).endHints();
    }
    return b.build();
  }

  private static boolean everyReadyHasZone(List<PublishedEndpoint> endpoints) {
    for (PublishedEndpoint e : endpoints) {
      if (e.ready() && e.zone() == null) {
        return false;
      }
    }
    return true;
  }
}
