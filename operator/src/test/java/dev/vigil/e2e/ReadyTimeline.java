package dev.vigil.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The {@code ready} condition of every endpoint of one Service's EndpointSlices, as a watch
 * delivers it to a consumer, with the wall-clock time (epoch ms) each change arrived: when a
 * backend left the ready set, and what every other backend was meanwhile. The slices listed on
 * start are the first entry; every watch event adds one entry with the whole Service's view after
 * it.
 */
final class ReadyTimeline implements AutoCloseable {
  /** The Service's endpoints after one event: address to ready, at {@code atMs}. */
  record Entry(long atMs, Map<String, Boolean> ready) {}

  private final List<Entry> entries = new CopyOnWriteArrayList<>();
  private final List<String> problems = new CopyOnWriteArrayList<>();
  private final Map<String, Map<String, Boolean>> bySlice = new HashMap<>();
  private final Watch watch;

  ReadyTimeline(KubernetesClient admin, String namespace, String service) {
    var slices =
        admin
            .discovery()
            .v1()
            .endpointSlices()
            .inNamespace(namespace)
            .withLabel("kubernetes.io/service-name", service);
    var list = slices.list();
    synchronized (this) {
      list.getItems().forEach(s -> bySlice.put(s.getMetadata().getName(), ready(s)));
      record();
    }
    watch =
        slices
            .withResourceVersion(list.getMetadata().getResourceVersion())
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, EndpointSlice slice) {
                    changed(action, slice);
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    if (cause != null) {
                      problems.add("watch closed: " + cause);
                    }
                  }
                });
  }

  private synchronized void changed(Watcher.Action action, EndpointSlice slice) {
    String name = slice.getMetadata().getName();
    if (action == Watcher.Action.DELETED) {
      bySlice.remove(name);
    } else {
      bySlice.put(name, ready(slice));
    }
    record();
  }

  private void record() {
    Map<String, Boolean> all = new TreeMap<>();
    bySlice.values().forEach(all::putAll);
    entries.add(new Entry(System.currentTimeMillis(), Map.copyOf(all)));
  }

  private static Map<String, Boolean> ready(EndpointSlice slice) {
    Map<String, Boolean> out = new TreeMap<>();
    if (slice.getEndpoints() != null) {
      for (Endpoint e : slice.getEndpoints()) {
        boolean ready =
            e.getConditions() != null && Boolean.TRUE.equals(e.getConditions().getReady());
        e.getAddresses().forEach(a -> out.put(a, ready));
      }
    }
    return out;
  }

  /** Every entry so far, oldest first. */
  List<Entry> entries() {
    return List.copyOf(entries);
  }

  /** A lost watch, if any: the timeline is then incomplete. */
  List<String> problems() {
    return List.copyOf(problems);
  }

  /**
   * Waits (bounded) for the first entry at or after {@code sinceMs} where {@code ip} is listed with
   * {@code ready}; returns when it arrived.
   */
  long waitFor(String ip, boolean ready, long sinceMs, Duration atMost) {
    return await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> first(ip, ready, sinceMs), Optional::isPresent)
        .orElseThrow()
        .atMs();
  }

  private Optional<Entry> first(String ip, boolean ready, long sinceMs) {
    return entries.stream()
        .filter(e -> e.atMs() >= sinceMs && Boolean.valueOf(ready).equals(e.ready().get(ip)))
        .findFirst();
  }

  @Override
  public void close() {
    watch.close();
  }
}
