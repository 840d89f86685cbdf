package dev.vigil.testing;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Watches a namespace's EndpointSlices and records every flap: an endpoint published not ready, a
 * slice deleted, or the watch lost. Start it once every backend is ready; it must stay empty while
 * pools move between replicas.
 */
public final class SliceFlaps implements AutoCloseable {
  private final List<String> flaps = new CopyOnWriteArrayList<>();
  private final Watch watch;

  public SliceFlaps(KubernetesClient client, String namespace) {
    watch =
        client
            .discovery()
            .v1()
            .endpointSlices()
            .inNamespace(namespace)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, EndpointSlice slice) {
                    if (action == Action.DELETED) {
                      flaps.add("deleted " + slice.getMetadata().getName());
                      return;
                    }
                    for (Endpoint e : slice.getEndpoints()) {
                      if (!Boolean.TRUE.equals(e.getConditions().getReady())) {
                        flaps.add(slice.getMetadata().getName() + " " + e.getAddresses());
                      }
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    if (cause != null) {
                      flaps.add("watch closed: " + cause);
                    }
                  }
                });
  }

  /** The flaps seen so far. */
  public List<String> seen() {
    return List.copyOf(flaps);
  }

  @Override
  public void close() {
    watch.close();
  }
}
