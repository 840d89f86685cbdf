package dev.vigil.demo;

import dev.vigil.api.v1alpha1.BackendPool;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the demo shows of the pool, read from the API server as a consumer of the API would read it:
 * the EndpointSlices' endpoints, the pool's status and its Events.
 */
final class ClusterReads {
  private final KubernetesClient client;
  private final String namespace;
  private final String poolName;
  private final String serviceName;

  ClusterReads(KubernetesClient client, String namespace, String poolName, String serviceName) {
    this.client = client;
    this.namespace = namespace;
    this.poolName = poolName;
    this.serviceName = serviceName;
  }

  /** Every endpoint of the pool's EndpointSlices: address to ready. */
  Map<String, Boolean> endpoints() {
    Map<String, Boolean> out = new LinkedHashMap<>();
    List<EndpointSlice> slices =
        client
            .discovery()
            .v1()
            .endpointSlices()
            .inNamespace(namespace)
            .withLabel("kubernetes.io/service-name", serviceName)
            .list()
            .getItems();
    for (EndpointSlice s : slices) {
      if (s.getEndpoints() == null) {
        continue;
      }
      for (Endpoint e : s.getEndpoints()) {
        boolean ready =
            e.getConditions() != null && Boolean.TRUE.equals(e.getConditions().getReady());
        for (String a : e.getAddresses()) {
          out.put(a, ready);
        }
      }
    }
    return out;
  }

  BackendPool pool() {
    return client.resources(BackendPool.class).inNamespace(namespace).withName(poolName).get();
  }

  /** The pool's Events, oldest first. */
  List<Event> events() {
    List<Event> events =
        new ArrayList<>(client.v1().events().inNamespace(namespace).list().getItems());
    events.removeIf(
        e -> e.getInvolvedObject() == null || !poolName.equals(e.getInvolvedObject().getName()));
    inTimeOrder(events);
    return events;
  }

  /**
   * Sorts Events by their last timestamp as a time, not as text ({@code ...:04Z} sorts after {@code
   * ...:04.120Z} as a string), then creation time, then resourceVersion as a number.
   */
  static void inTimeOrder(List<Event> events) {
    events.sort(
        Comparator.comparing((Event e) -> instant(e.getLastTimestamp()))
            .thenComparing(e -> instant(e.getMetadata().getCreationTimestamp()))
            .thenComparing(
                e -> e.getMetadata().getResourceVersion(),
                Comparator.nullsFirst(
                    Comparator.comparingLong((String v) -> v.length())
                        .thenComparing(Comparator.<String>naturalOrder()))));
  }

  private static Instant instant(String timestamp) {
    if (timestamp == null) {
      return Instant.EPOCH;
    }
    try {
      return Instant.parse(timestamp);
    } catch (DateTimeParseException e) {
      return Instant.EPOCH;
    }
  }
}
