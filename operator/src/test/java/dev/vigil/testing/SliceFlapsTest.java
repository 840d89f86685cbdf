package dev.vigil.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.demo.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watcher.Action;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SliceFlapsTest {
  private final SliceFlaps.Recorder flaps = new SliceFlaps.Recorder();

  @Test
  void anUnchangedOrGrowingSliceIsNoFlap() {
    flaps.baseline(slice("s", "10.0.0.1", "10.0.0.2"));
    flaps.eventReceived(Action.ADDED, slice("s", "10.0.0.1", "10.0.0.2"));
    flaps.eventReceived(Action.MODIFIED, slice("s", "10.0.0.1", "10.0.0.2", "10.0.0.3"));
    flaps.eventReceived(Action.ADDED, slice("new", "10.0.0.9"));
    flaps.eventReceived(Action.ADDED, emptied("new-and-empty"));
    assertThat(flaps.seen()).isEmpty();
  }

  @Test
  void anEndpointPublishedNotReadyIsAFlap() {
    EndpointSlice s = slice("s", "10.0.0.1", "10.0.0.2");
    s.getEndpoints().get(1).getConditions().setReady(false);
    flaps.eventReceived(Action.MODIFIED, s);
    assertThat(flaps.seen()).containsExactly("s not ready [10.0.0.2]");
  }

  @Test
  void anEndpointDroppedFromASliceIsAFlap() {
    flaps.baseline(slice("s", "10.0.0.1", "10.0.0.2"));
    flaps.eventReceived(Action.MODIFIED, slice("s", "10.0.0.1"));
    assertThat(flaps.seen()).containsExactly("s dropped 10.0.0.2");
  }

  @Test
  void anEndpointDroppedAfterTheWatchSawItIsAFlap() {
    flaps.eventReceived(Action.ADDED, slice("s", "10.0.0.1", "10.0.0.2"));
    flaps.eventReceived(Action.MODIFIED, slice("s", "10.0.0.2"));
    assertThat(flaps.seen()).containsExactly("s dropped 10.0.0.1");
  }

  @Test
  void anEmptiedSliceIsAFlapWhetherNullOrEmpty() {
    flaps.baseline(slice("a", "10.0.0.1"));
    flaps.baseline(slice("b", "10.0.0.2"));
    flaps.eventReceived(Action.MODIFIED, emptied("a"));
    EndpointSlice b = emptied("b");
    b.setEndpoints(new java.util.ArrayList<>());
    flaps.eventReceived(Action.MODIFIED, b);
    assertThat(flaps.seen())
        .containsExactly("a emptied, had [10.0.0.1]", "b emptied, had [10.0.0.2]");
  }

  @Test
  void aDeletedSliceIsAFlap() {
    flaps.baseline(slice("s", "10.0.0.1"));
    flaps.eventReceived(Action.DELETED, slice("s", "10.0.0.1"));
    assertThat(flaps.seen()).containsExactly("deleted s");
  }

  @Test
  void aLostWatchIsAFlap() {
    flaps.onClose(
        new io.fabric8.kubernetes.client.WatcherException("gone", new RuntimeException()));
    assertThat(flaps.seen()).singleElement().asString().startsWith("watch closed: ");
  }

  /** Through a real watch: the list on start is the baseline; a null endpoint list is judged. */
  @Test
  void watchesTheNamespaceFromWhatWasListedOnStart() {
    try (EmbeddedApiServer api = EmbeddedApiServer.start()) {
      KubernetesClient client = api.client();
      var slices = client.discovery().v1().endpointSlices().inNamespace("ns");
      slices.resource(slice("kept", "10.0.0.1")).create();
      slices.resource(slice("emptied", "10.0.0.2")).create();
      slices.resource(slice("shrunk", "10.0.0.3", "10.0.0.4")).create();
      try (SliceFlaps watching = new SliceFlaps(client, "ns")) {
        slices.resource(emptied("emptied")).update();
        slices.resource(slice("shrunk", "10.0.0.3")).update();
        slices.resource(slice("kept", "10.0.0.1")).update();
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () ->
                    assertThat(watching.seen())
                        .containsExactlyInAnyOrder(
                            "emptied emptied, had [10.0.0.2]", "shrunk dropped 10.0.0.4"));
      }
    }
  }

  private static EndpointSlice slice(String name, String... ips) {
    return new EndpointSliceBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("ns")
        .endMetadata()
        .withAddressType("IPv4")
        .withEndpoints(
            Arrays.stream(ips)
                .map(
                    ip ->
                        new EndpointBuilder()
                            .withAddresses(ip)
                            .withNewConditions()
                            .withReady(true)
                            .endConditions()
                            .build())
                .toList())
        .build();
  }

  private static EndpointSlice emptied(String name) {
    EndpointSlice s = slice(name);
    s.setEndpoints(null);
    return s;
  }
}
