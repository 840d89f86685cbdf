package dev.vigil.testing;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Watches a namespace's EndpointSlices and records every flap: an endpoint published not ready, an
 * endpoint dropped from a slice that had it (an emptied slice, {@code endpoints: null} or {@code
 * []}, drops all of them), a slice deleted, or the watch lost. Start it once every backend is
 * ready; it must stay empty while pools move between replicas.
 *
 * <p>The slices listed on start are the baseline, so a drop between the list and the watch's first
 * event is still seen. A slice first seen after the start (a new slice) is its own baseline: an
 * empty new slice takes nothing away from a consumer.
 */
public final class SliceFlaps implements AutoCloseable {
  private final Recorder recorder = new Recorder();
  private final Watch watch;

  public SliceFlaps(KubernetesClient client, String namespace) {
    var slices = client.discovery().v1().endpointSlices().inNamespace(namespace);
    slices.list().getItems().forEach(recorder::baseline);
    watch = slices.watch(recorder);
  }

  /** The flaps seen so far. */
  public List<String> seen() {
    return recorder.seen();
  }

  @Override
  public void close() {
    watch.close();
  }

  /**
   * The flap rules, fed one watch event at a time: the last addresses each slice published are
   * remembered, so an event is judged against what a consumer had before it.
   */
  public static final class Recorder implements Watcher<EndpointSlice> {
    private final List<String> flaps = new CopyOnWriteArrayList<>();
    private final Map<String, Set<String>> published = new ConcurrentHashMap<>();

    /** Remembers what a slice publishes without judging it (the state on start). */
    public void baseline(EndpointSlice slice) {
      published.put(slice.getMetadata().getName(), addresses(slice));
    }

    @Override
    public void eventReceived(Action action, EndpointSlice slice) {
      String name = slice.getMetadata().getName();
      if (action == Action.DELETED) {
        flaps.add("deleted " + name);
        published.remove(name);
        return;
      }
      List<Endpoint> endpoints = slice.getEndpoints() == null ? List.of() : slice.getEndpoints();
      for (Endpoint e : endpoints) {
        if (e.getConditions() == null || !Boolean.TRUE.equals(e.getConditions().getReady())) {
          flaps.add(name + " not ready " + e.getAddresses());
        }
      }
      Set<String> now = addresses(slice);
      Set<String> before = published.put(name, now);
      if (before == null) {
        return;
      }
      if (now.isEmpty() && !before.isEmpty()) {
        flaps.add(name + " emptied, had " + before);
        return;
      }
      for (String address : before) {
        if (!now.contains(address)) {
          flaps.add(name + " dropped " + address);
        }
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      if (cause != null) {
        flaps.add("watch closed: " + cause);
      }
    }

    /** The flaps seen so far. */
    public List<String> seen() {
      return List.copyOf(flaps);
    }

    private static Set<String> addresses(EndpointSlice slice) {
      Set<String> out = new LinkedHashSet<>();
      if (slice.getEndpoints() != null) {
        for (Endpoint e : slice.getEndpoints()) {
          if (e.getAddresses() != null) {
            out.addAll(e.getAddresses());
          }
        }
      }
      return out;
    }
  }
}
