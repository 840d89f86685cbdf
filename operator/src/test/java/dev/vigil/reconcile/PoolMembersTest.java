package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.PoolPort;
import dev.vigil.publish.EndpointSliceDesired;
import dev.vigil.publish.PublishedEndpoint;
import dev.vigil.publish.ServiceDesired;
import dev.vigil.publish.ServicePort;
import dev.vigil.publish.SliceTarget;
import dev.vigil.runtime.Member;
import dev.vigil.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PoolMembersTest {
  private static final List<PoolPort> NAMED =
      List.of(new PoolPort("http", 80, new IntOrString("http")));

  private static Pod pod(String name, String ip, String portName, int port) {
    Pod p = Fixtures.pod("shop", name, "web", ip);
    p.getSpec()
        .getContainers()
        .get(0)
        .setPorts(
            List.of(new ContainerPortBuilder().withName(portName).withContainerPort(port).build()));
    return p;
  }

  @Test
  void podsWithoutAnAddressOrWithoutTheProbePortAreNoMembers() {
    Pod noIp = pod("a", "10.0.0.1", "http", 8080);
    noIp.getStatus().setPodIP(null);
    Pod renamed = pod("b", "10.0.0.2", "web", 8080);
    Pod fine = pod("c", "10.0.0.3", "http", 8080);

    List<Member> members =
        PoolMembers.members(List.of(noIp, renamed, fine), NAMED, null, true, Map.of());

    assertThat(members).extracting(Member::id).containsExactly("c");
    assertThat(members.get(0).probePort()).isEqualTo(8080);
  }

  @Test
  void finishedPodsAreNeverMembersWhateverTheirRestartPolicyOrReadiness() {
    List<Pod> pods = new java.util.ArrayList<>();
    int n = 0;
    for (String policy : new String[] {"Never", "OnFailure", "Always", null}) {
      for (String phase : new String[] {"Succeeded", "Failed", "Running", "Pending", null}) {
        Pod p = pod(policy + "-" + phase, "10.0.1." + (++n), "http", 8080);
        p.getSpec().setRestartPolicy(policy);
        p.getStatus().setPhase(phase);
        pods.add(p);
      }
    }
    Pod finishedButTerminating = pod("done-deleting", "10.0.2.1", "http", 8080);
    finishedButTerminating.getStatus().setPhase("Succeeded");
    finishedButTerminating.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
    pods.add(finishedButTerminating);

    for (boolean respect : new boolean[] {true, false}) {
      List<Member> members = PoolMembers.members(pods, NAMED, null, respect, Map.of());
      assertThat(members)
          .extracting(Member::id)
          .as("respectPodReadiness %s", respect)
          .containsExactlyInAnyOrder(
              "Never-Running",
              "Never-Pending",
              "Never-null",
              "OnFailure-Running",
              "OnFailure-Pending",
              "OnFailure-null",
              "Always-Running",
              "Always-Pending",
              "Always-null",
              "null-Running",
              "null-Pending",
              "null-null");
    }
  }

  @Test
  void aNamedPortOnlyAFinishedPodDeclaresLeavesNoServicePorts() {
    Pod done = pod("done", "10.0.0.1", "http", 8080);
    done.getStatus().setPhase("Succeeded");

    assertThat(PoolMembers.servicePorts(NAMED, List.of(done))).isEmpty();
  }

  @Test
  void terminatingPodsDrainAndNotReadyOnesDrainOnlyWhenReadinessIsRespected() {
    Pod terminating = pod("a", "10.0.0.1", "http", 8080);
    terminating.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
    Pod notReady = pod("b", "10.0.0.2", "http", 8080);
    notReady.getStatus().getConditions().get(0).setStatus("False");

    List<Member> respected =
        PoolMembers.members(List.of(terminating, notReady), NAMED, null, true, Map.of());
    List<Member> ignored =
        PoolMembers.members(List.of(terminating, notReady), NAMED, null, false, Map.of());

    assertThat(respected).allMatch(Member::draining);
    assertThat(respected.get(0).terminating()).isTrue();
    assertThat(ignored.get(1).draining()).isFalse();
  }

  @Test
  void theZoneIsTheNodesAndAPodsOwnLabelIsIgnored() {
    Pod labelled = pod("a", "10.0.0.1", "http", 8080);
    labelled.getMetadata().getLabels().put(PoolMembers.ZONE_LABEL, "stale");
    Pod elsewhere = pod("b", "10.0.0.2", "http", 8080);
    elsewhere.getSpec().setNodeName("node-2");

    List<Member> members =
        PoolMembers.members(
            List.of(labelled, elsewhere), NAMED, null, true, Map.of("node-1", "zone-a"));

    assertThat(members).extracting(Member::zone).containsExactly("zone-a", null);
  }

  @Test
  void aRolloutThatRenumbersANamedPortPublishesEachPodWithItsOwnPort() {
    List<Pod> pods =
        List.of(
            pod("old-1", "10.0.0.1", "http", 8080),
            pod("old-2", "10.0.0.2", "http", 8080),
            pod("new-1", "10.0.0.3", "http", 9090));
    List<Member> members = PoolMembers.members(pods, NAMED, null, true, Map.of());
    assertThat(members)
        .extracting(Member::ports)
        .containsExactly(List.of(8080), List.of(8080), List.of(9090));

    List<ServicePort> service = PoolMembers.servicePorts(NAMED, pods).orElseThrow();
    SliceTarget target =
        new SliceTarget(
            "shop",
            "web",
            Map.of(),
            false,
            false,
            new OwnerReferenceBuilder().withName("web").withUid("u").build(),
            ServiceDesired.slicePorts(service),
            100);
    List<PublishedEndpoint> endpoints =
        members.stream()
            .map(
                m ->
                    PublishedEndpoint.of(
                        m.ip(), m.id(), m.podUid(), null, null, true, true, false, m.ports()))
            .toList();

    Map<String, Integer> portByIp = new TreeMap<>();
    for (EndpointSlice s : EndpointSliceDesired.build(target, endpoints, List.of())) {
      assertThat(s.getPorts()).hasSize(1);
      s.getEndpoints()
          .forEach(e -> portByIp.put(e.getAddresses().get(0), s.getPorts().get(0).getPort()));
    }
    assertThat(portByIp)
        .containsExactlyEntriesOf(
            new TreeMap<>(Map.of("10.0.0.1", 8080, "10.0.0.2", 8080, "10.0.0.3", 9090)));
  }

  @Test
  void aNamedPortNoPodDeclaresLeavesNoServicePorts() {
    assertThat(PoolMembers.servicePorts(NAMED, List.of(pod("a", "10.0.0.1", "web", 8080))))
        .isEmpty();
    assertThat(
            PoolMembers.servicePorts(
                List.of(new PoolPort("http", 80, new IntOrString(8080))), List.of()))
        .get()
        .isEqualTo(List.of(new ServicePort("http", 80, 8080, "TCP")));
  }
}
