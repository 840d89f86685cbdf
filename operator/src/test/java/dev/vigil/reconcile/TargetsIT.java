package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.demo.DemoBackend;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.LoopbackDns;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 1, backends that are not Pods: the real operator against the Fabric8 mock API
 * server, a pool of {@code spec.targets} (two static addresses and a hostname served by a real
 * loopback DNS server, {@code --dns-server}), each backend a real HTTP server on its own loopback
 * address and no Pod anywhere. A killed target goes ready=false and comes back; the slice follows a
 * changed DNS answer; a name that stops resolving keeps its last answer and status says so.
 */
class TargetsIT {
  private static final String NS = "shop";
  private static final String NAME = "db.vigil.test";
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  @AutoClose private final MockCluster cluster = MockCluster.start();
  @AutoClose private final LoopbackDns dns = LoopbackDns.start();
  private final KubernetesClient client = cluster.client();

  @Test
  void targetsAreCheckedPublishedAndFollowDns() {
    DemoBackend vm0 = cluster.backend("127.0.0.60");
    DemoBackend vm1 = cluster.backend("127.0.0.61");
    cluster.backend("127.0.0.62");
    cluster.backend("127.0.0.63");
    dns.answer(NAME, 1, "127.0.0.62");
    client.resource(Fixtures.policy(NS, "fast", "200ms", "150ms")).create();
    client.resource(pool()).create();
    cluster.operator(
        MockCluster.config(NS, "--dns-server=" + dns.flag(), "--refuse-target-networks=none"));

    await()
        .atMost(PATIENCE)
        .until(() -> ready().equals(Set.of("127.0.0.60", "127.0.0.61", "127.0.0.62")));
    Endpoint vm = endpoints().get("127.0.0.61");
    assertThat(vm.getTargetRef()).isNull();
    assertThat(vm.getNodeName()).isNull();
    assertThat(vm.getZone()).isEqualTo("zone-a");
    // the slice and the status are separate writes: wait for the status row too
    await().atMost(PATIENCE).until(() -> status("db.vigil.test/127.0.0.62") != null);
    await()
        .atMost(PATIENCE)
        .until(() -> condition() != null && "True".equals(condition().getStatus()));

    // killed: its endpoint stays listed, ready=false; recovered: ready again
    vm0.set(DemoBackend.Mode.REFUSE).toCompletionStage().toCompletableFuture().join();
    await()
        .atMost(PATIENCE)
        .until(() -> conditions("127.0.0.60").equals(List.of(false, false, false)));
    vm0.set(DemoBackend.Mode.HEALTHY).toCompletionStage().toCompletableFuture().join();
    await()
        .atMost(PATIENCE)
        .until(() -> conditions("127.0.0.60").equals(List.of(true, true, false)));

    // the name moves: the slice follows within the TTL (bounded up to 5 s) and a probe round
    dns.answer(NAME, 1, "127.0.0.63");
    await()
        .atMost(PATIENCE)
        .until(
            () ->
                endpoints().keySet().equals(Set.of("127.0.0.60", "127.0.0.61", "127.0.0.63"))
                    && ready().contains("127.0.0.63"));

    // the name stops resolving: the last answer is kept, and status says so
    dns.servfail(NAME);
    await()
        .atMost(PATIENCE)
        .until(() -> condition() != null && "False".equals(condition().getStatus()));
    assertThat(condition().getReason()).isEqualTo(Conditions.NOT_RESOLVING);
    assertThat(condition().getMessage()).contains(NAME, "SERVFAIL", "kept until");
    assertThat(ready()).contains("127.0.0.63");
    await()
        .atMost(PATIENCE)
        .until(
            () ->
                status("db.vigil.test/127.0.0.63") != null
                    && String.valueOf(status("db.vigil.test/127.0.0.63").getReason())
                        .contains("does not resolve (SERVFAIL)"));
    assertThat(vm1.requests()).isPositive();

    // kubectl vigil why, by hostname and by address
    assertThat(why(NAME))
        .contains("Target shop/db.vigil.test/127.0.0.63", "IP 127.0.0.63")
        .contains("dns:", "NotResolving");
    assertThat(why("127.0.0.61")).contains("Target shop/127.0.0.61", "ready=true");
  }

  private String why(String name) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code =
        new dev.vigil.inspect.InspectCommand(
                new dev.vigil.inspect.Console(
                    () -> cluster.newClient(c -> c),
                    new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
                    new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8)))
            .why(List.of(name, "-n", NS));
    assertThat(code).as(err.toString(java.nio.charset.StandardCharsets.UTF_8)).isZero();
    return out.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void aPoolWithBothSelectorAndTargetsIsRefusedNamingTheFields() {
    client.resource(Fixtures.policy(NS, "fast", "200ms", "150ms")).create();
    BackendPool both = pool();
    both.getSpec().setSelector(new io.fabric8.kubernetes.api.model.LabelSelector());
    client.resource(both).create();
    cluster.operator(
        MockCluster.config(NS, "--dns-server=" + dns.flag(), "--refuse-target-networks=none"));
    await()
        .atMost(PATIENCE)
        .until(
            () -> {
              Condition ready = poolCondition(Conditions.READY);
              return ready != null
                  && Conditions.INVALID_TARGETS.equals(ready.getReason())
                  && ready.getMessage().contains("exactly one of spec.selector and spec.targets");
            });
  }

  private BackendPool pool() {
    return Serialization.unmarshal(
        """
        apiVersion: vigil.dev/v1alpha1
        kind: BackendPool
        metadata: {name: db, namespace: %s}
        spec:
          policyRef: {name: fast}
          targets:
          - {address: 127.0.0.60}
          - {address: 127.0.0.61, zone: zone-a}
          - {hostname: %s}
          ports:
          - {name: http, port: 80, targetPort: %d, protocol: TCP}
        """
            .formatted(NS, NAME, cluster.port()),
        BackendPool.class);
  }

  private Set<String> ready() {
    return cluster.addresses(NS, "db", true);
  }

  private Map<String, Endpoint> endpoints() {
    return cluster.endpoints(NS, "db");
  }

  private List<Boolean> conditions(String ip) {
    return cluster.conditions(NS, "db", ip);
  }

  private Condition condition() {
    return poolCondition(Conditions.TARGETS_RESOLVED);
  }

  private Condition poolCondition(String type) {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName("db").get();
    if (p == null || p.getStatus() == null || p.getStatus().getConditions() == null) {
      return null;
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private BackendStatus status(String id) {
    BackendPool p = client.resources(BackendPool.class).inNamespace(NS).withName("db").get();
    if (p == null || p.getStatus() == null || p.getStatus().getBackends() == null) {
      return null;
    }
    return p.getStatus().getBackends().stream()
        .filter(s -> id.equals(s.getPod()))
        .findFirst()
        .orElse(null);
  }
}
