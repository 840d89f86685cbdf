package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.AgentCheck;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.demo.DemoBackend;
import dev.vigil.probe.LoopbackServers;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.LoopbackSockets;
import dev.vigil.testing.MockCluster;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 3, the agent check: the real operator against the Fabric8 mock API server (CRUD
 * mode); each Pod a real loopback HTTP backend plus a real TCP agent on the same address speaking
 * HAProxy's agent protocol, its answer set by the test. Each answer changes the slice as
 * docs/decision.md says, and back; an agent that stops answering sensibly changes nothing.
 */
class AgentIT {
  private static final String NS = "shop";
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final int agentPort = LoopbackSockets.closedPort();
  private final Map<String, AtomicReference<String>> answers = new HashMap<>();
  private final List<NetServer> agents = new java.util.ArrayList<>();

  @AfterEach
  void stopAgents() {
    agents.forEach(a -> LoopbackServers.await(a.close()));
  }

  @Test
  void eachAgentAnswerChangesTheSliceAndBack() {
    List<DemoBackend> b = startPool(3);
    String web0 = b.get(0).host();

    answers.get(web0).set("drain # overloaded\n");
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(List.of(false, true, true)));
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.DRAINING);
    assertThat(status("web-0").getReason()).isEqualTo("drain by agent: overloaded");

    answers.get(web0).set("maint\n");
    await().atMost(PATIENCE).until(() -> conditions(web0).isEmpty());
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.MAINT);

    answers.get(web0).set("ready\n");
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(List.of(true, true, false)));

    answers.get(web0).set("down # disk full\n");
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(List.of(false, false, false)));
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.DOWN);
    assertThat(status("web-0").getReason()).isEqualTo("down by agent: disk full");

    answers.get(web0).set("up\n");
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(List.of(true, true, false)));
    await().atMost(PATIENCE).until(() -> state("web-0") == BackendState.UP);
  }

  @Test
  void anAgentThatStopsMakingSenseLeavesItsLastWordStanding() {
    List<DemoBackend> b = startPool(2);
    String web1 = b.get(1).host();
    answers.get(web1).set("drain\n");
    await().atMost(PATIENCE).until(() -> conditions(web1).equals(List.of(false, true, true)));
    answers.get(web1).set("garbage, nothing known\n");
    answers.get(b.get(0).host()).set(""); // closes at once
    sleepIntervals(10);
    assertThat(conditions(web1)).isEqualTo(List.of(false, true, true));
    assertThat(conditions(b.get(0).host())).isEqualTo(List.of(true, true, false));
  }

  @Test
  void removingTheAgentFromThePolicyLiftsWhatItSaid() {
    List<DemoBackend> b = startPool(2);
    String web0 = b.get(0).host();
    answers.get(web0).set("maint\n");
    await().atMost(PATIENCE).until(() -> conditions(web0).isEmpty());
    // again until stored: the mock server's status writes can race a spec patch and undo it
    await()
        .atMost(PATIENCE)
        .until(
            () -> {
              var policies = client.resources(HealthPolicy.class).inNamespace(NS).withName("fast");
              if (policies.get().getSpec().getActive().getAgent() == null) {
                return true;
              }
              policies.edit(
                  p -> {
                    p.getSpec().getActive().setAgent(null);
                    return p;
                  });
              return false;
            });
    await().atMost(PATIENCE).until(() -> conditions(web0).equals(List.of(true, true, false)));
  }

  private static void sleepIntervals(int n) {
    try {
      Thread.sleep(300L * n);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private List<DemoBackend> startPool(int n) {
    List<DemoBackend> b = cluster.pods(NS, "web", n, 60);
    Set<String> all = new TreeSet<>();
    for (DemoBackend x : b) {
      all.add(x.host());
      agent(x.host());
    }
    HealthPolicy policy = Fixtures.policy(NS, "fast", "300ms", "200ms");
    policy.getSpec().getActive().setAgent(new AgentCheck(agentPort, "300ms"));
    client.resource(policy).create();
    client.resource(Fixtures.pool(NS, "web", "fast", "web", cluster.port())).create();
    cluster.operator(MockCluster.config(NS));
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.readyIps(NS).equals(all));
    return b;
  }

  /** A TCP agent on {@code host}: writes its current answer to each connection, then closes. */
  private void agent(String host) {
    AtomicReference<String> answer = new AtomicReference<>("up ready\n");
    answers.put(host, answer);
    NetServer server =
        cluster
            .vertx()
            .createNetServer(new NetServerOptions().setHost(host).setPort(agentPort))
            .connectHandler(s -> s.write(answer.get()).onComplete(x -> s.close()));
    LoopbackServers.await(server.listen());
    agents.add(server);
  }

  private Map<String, Endpoint> endpoints() {
    return cluster.endpoints(NS, "web");
  }

  private List<Boolean> conditions(String ip) {
    return cluster.conditions(NS, "web", ip);
  }

  private BackendStatus status(String pod) {
    return cluster.backendStatus(NS, "web", pod);
  }

  private BackendState state(String pod) {
    BackendStatus s = status(pod);
    return s == null ? null : s.getState();
  }
}
