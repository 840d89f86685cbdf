package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.demo.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@link EndpointSliceWriter} against the Fabric8 mock API server (CRUD), recording every request
 * it makes: only changed slices are written, nothing changed means no request, surplus slices are
 * deleted, a conflict costs one read and one retry.
 */
class EndpointSliceWriterTest {
  @AutoClose private final EmbeddedApiServer api = EmbeddedApiServer.start();
  private final KubernetesClient client = api.client();
  private final EndpointSliceWriter writer =
      new EndpointSliceWriter(client, WriteBudget.unlimited(), WriteCounter.NONE);
  private final SliceTarget target =
      new SliceTarget(
          "shop",
          "web",
          Map.of(),
          false,
          false,
          new OwnerReferenceBuilder()
              .withApiVersion("vigil.dev/v1alpha1")
              .withKind("BackendPool")
              .withName("web")
              .withUid("uid-web")
              .withController(true)
              .build(),
          List.of(
              new EndpointPortBuilder()
                  .withName("http")
                  .withProtocol("TCP")
                  .withPort(8080)
                  .build()),
          2);

  private static PublishedEndpoint ep(String ip, boolean ready) {
    return PublishedEndpoint.of(
        ip, "pod-" + ip, "uid-" + ip, null, null, ready, ready, false, List.of());
  }

  private List<EndpointSlice> live() {
    return client.discovery().v1().endpointSlices().inNamespace("shop").list().getItems();
  }

  /** Applies desired over what the server has now; returns the requests it made. */
  private List<String> apply(List<PublishedEndpoint> endpoints) throws Exception {
    drain();
    List<EndpointSlice> current = live();
    drain();
    EndpointSliceWriter.Writes writes =
        writer.apply(
            (slice, call) -> call.apply(slice),
            EndpointSliceDesired.build(target, endpoints, current),
            current);
    List<String> requests = drain();
    assertThat(requests).hasSize(writes.total() + reads(requests));
    return requests;
  }

  private static int reads(List<String> requests) {
    return (int) requests.stream().filter(r -> r.startsWith("GET")).count();
  }

  private List<String> drain() throws InterruptedException {
    List<String> out = new ArrayList<>();
    for (RecordedRequest r; (r = api.server().takeRequest(10, TimeUnit.MILLISECONDS)) != null; ) {
      out.add(r.getMethod() + " " + r.getPath().replaceAll("\\?.*", ""));
    }
    return out;
  }

  @Test
  void createsWritesOnlyWhatChangedAndNothingWhenNothingDid() throws Exception {
    String slices = "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices";
    assertThat(apply(List.of(ep("10.0.0.1", true), ep("10.0.0.2", true), ep("10.0.0.3", true))))
        .containsExactly("POST " + slices, "POST " + slices);

    assertThat(apply(List.of(ep("10.0.0.1", true), ep("10.0.0.2", true), ep("10.0.0.3", true))))
        .as("nothing changed: zero requests")
        .isEmpty();

    assertThat(apply(List.of(ep("10.0.0.1", true), ep("10.0.0.2", true), ep("10.0.0.3", false))))
        .as("one endpoint changed: one slice written")
        .containsExactly("PUT " + slices + "/web-vigil-1");

    assertThat(apply(List.of(ep("10.0.0.1", true), ep("10.0.0.2", true))))
        .as("a slice emptied: deleted")
        .containsExactly("DELETE " + slices + "/web-vigil-1");
    assertThat(live()).extracting(s -> s.getMetadata().getName()).containsExactly("web-vigil-0");
  }

  @Test
  void aConflictReadsTheLiveSliceOnceAndRetries() throws Exception {
    apply(List.of(ep("10.0.0.1", true)));
    List<EndpointSlice> stale = live();
    // someone else writes the slice: the cached resourceVersion is now stale
    EndpointSlice theirs = stale.get(0);
    client
        .resource(
            new io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder(theirs)
                .editMetadata()
                .addToAnnotations("touched", "yes")
                .endMetadata()
                .build())
        .update();
    drain();

    EndpointSliceWriter.Writes writes =
        writer.apply(
            (slice, call) -> call.apply(slice),
            EndpointSliceDesired.build(target, List.of(ep("10.0.0.1", false)), stale),
            stale);

    String path = "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices/web-vigil-0";
    assertThat(drain()).containsExactly("PUT " + path, "GET " + path, "PUT " + path);
    assertThat(writes.updated()).isEqualTo(1);
    assertThat(live().get(0).getEndpoints().get(0).getConditions().getReady()).isFalse();
  }
}
