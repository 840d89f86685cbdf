package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
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
 * Builds the EndpointSlices a pool should have (docs/design.md §3), pure: no API calls.
 *
 * <p>Endpoints are grouped by their port set (a rollout that renames or renumbers a container port
 * has two), one set of slices per group. Placement is sticky: an endpoint stays in the slice that
 * already holds it, new endpoints fill the lowest-numbered slices of their port set with room, and
 * a slice is added only when all of them are full. So a Pod joining or leaving touches one slice,
 * not every slice after it.
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
    Map<Integer, Placed> placed = place(target, addressType, endpoints, current);
    List<EndpointSlice> out = new ArrayList<>(placed.size());
    for (Map.Entry<Integer, Placed> slice : placed.entrySet()) {
      List<Endpoint> items = new ArrayList<>(slice.getValue().endpoints().size());
      for (PublishedEndpoint e : slice.getValue().endpoints()) {
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
              .withPorts(slice.getValue().ports())
              .build());
    }
    return out;
  }

  /** One slice's port set and endpoints. */
  private record Placed(List<EndpointPort> ports, List<PublishedEndpoint> endpoints) {}

  /**
   * The slice ports of one endpoint: the target's ports with this Pod's numbers, leaving out a
   * named port the Pod lacks. Endpoints with equal ports share slices; every port set gets its own
   * (as the EndpointSlice controller's {@code reconcileByPortMapping}), so during a rollout that
   * renames or renumbers a container port each Pod is published with its own port.
   */
  static List<EndpointPort> portsOf(SliceTarget target, PublishedEndpoint e) {
    List<EndpointPort> template = target.ports();
    if (e.ports().size() != template.size()) {
      return template;
    }
    List<EndpointPort> out = new ArrayList<>(template.size());
    for (int i = 0; i < template.size(); i++) {
      int port = e.ports().get(i);
      if (port == template.get(i).getPort()) {
        out.add(template.get(i));
      } else if (port > 0) {
        out.add(new EndpointPortBuilder(template.get(i)).withPort(port).build());
      }
    }
    return out.size() == template.size() && out.equals(template) ? template : out;
  }

  /**
   * Slice index to its port set and endpoints, sorted by address inside each slice. Sticky: an
   * endpoint stays in the slice holding it while that slice has its port set; new ones fill the
   * lowest-numbered slice of their port set with room, else the lowest free index.
   */
  private static Map<Integer, Placed> place(
      SliceTarget target,
      String addressType,
      List<PublishedEndpoint> endpoints,
      List<EndpointSlice> current) {
    Map<String, Integer> previousSlice = new HashMap<>();
    TreeMap<Integer, Placed> placed = currentSlices(target, addressType, current, previousSlice);
    List<Unplaced> unplaced = keepInPreviousSlice(target, endpoints, previousSlice, placed);
    for (Unplaced e : unplaced) {
      placeNew(target.maxEndpointsPerSlice(), e, placed);
    }
    return withoutEmptySlices(placed);
  }

  /** An endpoint not kept in its previous slice, with its slice ports. */
  private record Unplaced(PublishedEndpoint endpoint, List<EndpointPort> ports) {}

  /** The current slices of this family, empty, by index; notes where each held an address. */
  private static TreeMap<Integer, Placed> currentSlices(
      SliceTarget target,
      String addressType,
      List<EndpointSlice> current,
      Map<String, Integer> previousSlice) {
    TreeMap<Integer, Placed> placed = new TreeMap<>();
    for (EndpointSlice slice : current) {
      int index = previousSlice(target, addressType, slice, previousSlice);
      if (index >= 0) {
        List<EndpointPort> ports = slice.getPorts() == null ? List.of() : slice.getPorts();
        placed.putIfAbsent(index, new Placed(ports, new ArrayList<>()));
      }
    }
    return placed;
  }

  /**
   * Puts each endpoint, by address, back in the slice that held it while that slice has its port
   * set and room; returns the others, in address order.
   */
  private static List<Unplaced> keepInPreviousSlice(
      SliceTarget target,
      List<PublishedEndpoint> endpoints,
      Map<String, Integer> previousSlice,
      Map<Integer, Placed> placed) {
    List<Unplaced> unplaced = new ArrayList<>();
    List<PublishedEndpoint> sorted = new ArrayList<>(endpoints);
    sorted.sort(Comparator.comparing(PublishedEndpoint::ip));
    for (PublishedEndpoint e : sorted) {
      List<EndpointPort> ports = portsOf(target, e);
      Integer index = previousSlice.get(e.ip());
      Placed slice = index == null ? null : placed.get(index);
      if (slice != null
          && slice.ports().equals(ports)
          && slice.endpoints().size() < target.maxEndpointsPerSlice()) {
        slice.endpoints().add(e);
      } else {
        unplaced.add(new Unplaced(e, ports));
      }
    }
    return unplaced;
  }

  /**
   * Into the lowest-numbered slice of its port set with room, else a new one at the lowest free
   * index.
   */
  private static void placeNew(int max, Unplaced e, TreeMap<Integer, Placed> placed) {
    Integer index = null;
    for (Map.Entry<Integer, Placed> slice : placed.entrySet()) {
      if (slice.getValue().ports().equals(e.ports()) && slice.getValue().endpoints().size() < max) {
        index = slice.getKey();
        break;
      }
    }
    if (index == null) {
      index = 0;
      while (placed.containsKey(index)) {
        index++;
      }
      placed.put(index, new Placed(e.ports(), new ArrayList<>()));
    }
    placed.get(index).endpoints().add(e.endpoint());
  }

  /** The slices with endpoints, each sorted by address; a slice that emptied goes. */
  private static Map<Integer, Placed> withoutEmptySlices(TreeMap<Integer, Placed> placed) {
    Map<Integer, Placed> out = new LinkedHashMap<>();
    placed.forEach(
        (i, slice) -> {
          // a slice that emptied goes; the slices after it keep their names (no writes)
          if (!slice.endpoints().isEmpty()) {
            slice.endpoints().sort(Comparator.comparing(PublishedEndpoint::ip));
            out.put(i, slice);
          }
        });
    return out;
  }

  /** Notes where a current slice of this family holds each address; returns its index or -1. */
  private static int previousSlice(
      SliceTarget target, String addressType, EndpointSlice slice, Map<String, Integer> where) {
    if (!addressType.equals(slice.getAddressType())) {
      return -1;
    }
    int index = indexOf(target.serviceName(), addressType, slice.getMetadata().getName());
    if (index < 0 || slice.getEndpoints() == null) {
      return index;
    }
    for (Endpoint e : slice.getEndpoints()) {
      if (e.getAddresses() != null && !e.getAddresses().isEmpty()) {
        where.putIfAbsent(e.getAddresses().get(0), index);
      }
    }
    return index;
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
            .withNodeName(e.nodeName())
            .withZone(e.zone());
    if (e.podUid() != null) {
      b.withTargetRef(
          new ObjectReferenceBuilder()
              .withKind("Pod")
              .withNamespace(target.namespace())
              .withName(e.podName())
              .withUid(e.podUid())
              .build());
    } else {
      b.withHostname(targetHostname(e.podName()));
    }
    if (hints && e.zone() != null) {
      b.withNewHints().withForZones(new ForZoneBuilder().withName(e.zone()).build()).endHints();
    }
    return b.build();
  }

  private static final java.util.regex.Pattern DNS_LABEL =
      java.util.regex.Pattern.compile("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$");

  /**
   * A target (no Pod) named {@code hostname/address} carries its hostname where that is one DNS
   * label, as the field requires; any other target carries none (no targetRef either).
   */
  static String targetHostname(String id) {
    int slash = id.indexOf('/');
    String host = slash < 0 ? null : id.substring(0, slash);
    return host != null && DNS_LABEL.matcher(host).matches() ? host : null;
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
