package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.demo.EmbeddedApiServer;
import dev.vigil.publish.NamespacePace;
import dev.vigil.publish.PoolStatusPublisher;
import dev.vigil.publish.WriteBudget;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The old owner's side of a move against the Fabric8 mock server in CRUD mode: the handover status
 * write after a pool was relabelled away, and the sweep of a replica restarted under its name. The
 * status comes from the real {@link PoolStatusPublisher#handOver} (here without a runtime: the
 * previous status with the owner changed).
 */
class PoolHandoffIT {
  private static final String NS = "shop";
  private static final long NOW = 1_767_225_600_000L; // 2026-01-01T00:00:00Z

  private KubernetesMockServer server;
  private Paging dispatcher;
  private KubernetesClient client;
  private final WriteBudget budget = WriteBudget.unlimited();
  private final AtomicBoolean writable = new AtomicBoolean(true);

  /**
   * CRUD mode, plus the paging a real API server does and the mock server does not (it ignores
   * {@code limit}): a list of pools with a limit answers that many, with a {@code continue} token
   * (the last key answered) while more remain. Every pool list it answered is logged.
   */
  static final class Paging extends KubernetesMixedDispatcher {
    final List<String> poolLists = new CopyOnWriteArrayList<>();

    Paging(Map<ServerRequest, Queue<ServerResponse>> expectations) {
      super(expectations);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      String path = request.getPath();
      if (!request.getMethod().equals("GET")
          || !path.contains("/backendpools?")
          || !path.contains("limit=")) {
        return super.dispatch(request);
      }
      poolLists.add(path);
      Map<String, String> query = query(path);
      MockResponse whole = super.dispatch(request);
      GenericKubernetesResourceList list =
          Serialization.unmarshal(whole.getBody().readUtf8(), GenericKubernetesResourceList.class);
      // as etcd does: items in key order, the token the last key returned (an update between two
      // pages moves nothing)
      String after = query.getOrDefault("continue", "");
      int limit = Integer.parseInt(query.get("limit"));
      List<GenericKubernetesResource> rest =
          list.getItems().stream()
              .sorted(Comparator.comparing(Paging::key))
              .filter(item -> key(item).compareTo(after) > 0)
              .toList();
      List<GenericKubernetesResource> page = rest.subList(0, Math.min(limit, rest.size()));
      list.setItems(new ArrayList<>(page));
      list.getMetadata()
          .setContinue(page.size() < rest.size() ? key(page.get(page.size() - 1)) : null);
      return whole.setBody(Serialization.asJson(list));
    }

    private static String key(GenericKubernetesResource item) {
      return item.getMetadata().getNamespace() + "/" + item.getMetadata().getName();
    }

    private static Map<String, String> query(String path) {
      Map<String, String> out = new HashMap<>();
      for (String pair : path.substring(path.indexOf('?') + 1).split("&")) {
        int eq = pair.indexOf('=');
        out.put(
            URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
      return out;
    }
  }

  @BeforeEach
  void setUp() {
    Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
    dispatcher = new Paging(expectations);
    server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), expectations, dispatcher, false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = server.createClient();
    for (CustomResourceDefinition crd : EmbeddedApiServer.crds()) {
      client.resource(crd).create();
    }
  }

  @AfterEach
  void tearDown() {
    client.close();
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      // see EmbeddedApiServer.close
    }
  }

  private PoolHandoff handoff(String identity) {
    return new PoolHandoff(
        client,
        identity,
        writable::get,
        s -> Optional.of(ShardPlanner.ShardState.LIVE),
        () -> NOW,
        15_000);
  }

  private PoolStatusPublisher statuses(String identity) {
    PoolStatusPublisher p =
        new PoolStatusPublisher(
            client,
            budget,
            null,
            k -> Optional.empty(),
            k -> Optional.empty(),
            () -> null,
            () -> NOW,
            0,
            NamespacePace.unlimited(),
            1,
            () -> {});
    p.ownedBy(identity);
    return p;
  }

  /** A pool labelled for {@code label} whose status names {@code inStatus}, probing. */
  private void pool(String name, String label, String inStatus) {
    BackendPool p = Fixtures.pool(NS, name, "fast", name, 8080);
    Map<String, String> labels = new HashMap<>();
    if (label != null) {
      labels.put(ShardConfig.SHARD_LABEL, label);
    }
    p.getMetadata().setLabels(labels);
    BackendPool created = client.resource(p).create();
    BackendPoolStatus status = new BackendPoolStatus();
    status.setShard(inStatus);
    status.setAvailability("2/2");
    status.setConditions(
        List.of(
            condition(Conditions.READY, "True", Conditions.ENOUGH_AVAILABLE),
            condition(Conditions.PROBING, "True", Conditions.OWNED)));
    created.setStatus(status);
    client.resource(created).updateStatus();
  }

  private static Condition condition(String type, String status, String reason) {
    Condition c = new Condition();
    c.setType(type);
    c.setStatus(status);
    c.setReason(reason);
    c.setMessage("m");
    c.setLastTransitionTime("2025-12-31T00:00:00Z");
    return c;
  }

  private BackendPool get(String name) {
    return client.resources(BackendPool.class).inNamespace(NS).withName(name).get();
  }

  private static Condition probing(BackendPool p) {
    return p.getStatus().getConditions().stream()
        .filter(c -> c.getType().equals(Conditions.PROBING))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void theOldOwnerNamesTheNewOneInStatusExactlyAsItWouldItself() throws Exception {
    pool("moved", "b", "a");
    String before = get("moved").getMetadata().getResourceVersion();

    assertThat(handoff("a").handOver(new PoolKey(NS, "moved"), statuses("a")::handOver)).isTrue();
    assertThat(budget.granted(WriteBudget.Priority.HANDOVER))
        .as("the handover status took a HANDOVER token")
        .isEqualTo(1);

    BackendPool after = get("moved");
    assertThat(after.getMetadata().getResourceVersion()).isNotEqualTo(before);
    assertThat(after.getStatus().getShard()).isEqualTo("b");
    assertThat(after.getStatus().getAvailability()).as("the rest as it was").isEqualTo("2/2");
    assertThat(probing(after).getStatus()).isEqualTo("True");
    assertThat(probing(after).getReason()).isEqualTo(Conditions.OWNED);
    assertThat(probing(after).getMessage()).isEqualTo("shard b probes this pool");
    assertThat(probing(after).getLastTransitionTime())
        .as("still probing: no transition")
        .isEqualTo("2025-12-31T00:00:00Z");
    assertThat(after.getStatus().getConditions())
        .as("one Probing condition")
        .filteredOn(c -> c.getType().equals(Conditions.PROBING))
        .hasSize(1);
  }

  @Test
  void nothingIsWrittenForADeletedPoolOneAnotherShardHoldsOrWithoutTheLease() throws Exception {
    pool("elsewhere", "b", "c");
    String before = get("elsewhere").getMetadata().getResourceVersion();
    assertThat(handoff("a").handOver(new PoolKey(NS, "elsewhere"), statuses("a")::handOver))
        .isFalse();
    assertThat(handoff("a").handOver(new PoolKey(NS, "deleted"), statuses("a")::handOver))
        .isFalse();
    assertThat(get("elsewhere").getMetadata().getResourceVersion()).isEqualTo(before);

    pool("fenced", "b", "a");
    String fencedBefore = get("fenced").getMetadata().getResourceVersion();
    writable.set(false);
    assertThat(handoff("a").handOver(new PoolKey(NS, "fenced"), statuses("a")::handOver)).isFalse();
    assertThat(get("fenced").getMetadata().getResourceVersion()).isEqualTo(fencedBefore);
  }

  @Test
  void aPoolWhoseLabelWasRemovedIsHandedToNobody() throws Exception {
    pool("unlabelled", null, "a");
    assertThat(handoff("a").handOver(new PoolKey(NS, "unlabelled"), statuses("a")::handOver))
        .isTrue();
    BackendPool after = get("unlabelled");
    assertThat(after.getStatus().getShard()).isNull();
    assertThat(probing(after).getStatus()).isEqualTo("False");
    assertThat(probing(after).getReason()).isEqualTo(Conditions.HANDING_OVER);
    assertThat(probing(after).getMessage())
        .isEqualTo("shard a stopped probing; no shard is assigned yet");
  }

  @Test
  void aRestartedReplicaHandsOverWhatMovedAwayWhileItWasDownAndNothingElse() throws Exception {
    for (int i = 0; i < 300; i++) { // more than one page of 250
      pool("p" + i, i % 3 == 0 ? "b" : "a", i % 3 == 2 ? "c" : "a");
    }
    Map<String, String> versions = new HashMap<>();
    for (BackendPool p : client.resources(BackendPool.class).inNamespace(NS).list().getItems()) {
      versions.put(p.getMetadata().getName(), p.getMetadata().getResourceVersion());
    }

    assertThat(handoff("a").sweep(Set.of(NS), statuses("a")::handOver)).isEqualTo(100);
    assertThat(dispatcher.poolLists)
        .as("the sweep read two pages: 250, then the rest after the continue token")
        .hasSize(2)
        .satisfies(
            lists -> {
              assertThat(lists.get(0)).contains("limit=250").doesNotContain("continue=");
              assertThat(lists.get(1)).contains("limit=250").contains("continue=");
            });

    for (BackendPool p : client.resources(BackendPool.class).inNamespace(NS).list().getItems()) {
      int i = Integer.parseInt(p.getMetadata().getName().substring(1));
      boolean written =
          !p.getMetadata().getResourceVersion().equals(versions.get(p.getMetadata().getName()));
      if (i % 3 == 0) {
        assertThat(p.getStatus().getShard()).as(p.getMetadata().getName()).isEqualTo("b");
        assertThat(written).isTrue();
      } else {
        assertThat(written).as("%s: not moved, or not a's", p.getMetadata().getName()).isFalse();
      }
    }
  }
}
