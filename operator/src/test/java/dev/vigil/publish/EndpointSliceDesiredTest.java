package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class EndpointSliceDesiredTest {
  private static final OwnerReference OWNER =
      new OwnerReferenceBuilder()
          .withApiVersion("vigil.dev/v1alpha1")
          .withKind("BackendPool")
          .withName("web")
          .withUid("uid-1")
          .withController(true)
          .build();
  private static final List<EndpointPort> PORTS =
      List.of(
          new EndpointPortBuilder().withName("http").withProtocol("TCP").withPort(8080).build());

  private static SliceTarget target(int max) {
    return new SliceTarget("shop", "web", Map.of("app", "web"), false, false, OWNER, PORTS, max);
  }

  private static PublishedEndpoint up(String ip) {
    return PublishedEndpoint.of(
        ip, "pod-" + ip, "uid-" + ip, "node-1", "zone-a", true, true, false, List.of());
  }

  @Test
  void writesAllThreeConditionsAsExplicitBooleansPerTheTable() {
    PublishedEndpoint available =
        PublishedEndpoint.of("10.0.0.1", "a", "ua", null, null, true, true, false, List.of());
    PublishedEndpoint down =
        PublishedEndpoint.of("10.0.0.2", "b", "ub", null, null, false, false, false, List.of());
    PublishedEndpoint panicPublishedDown =
        PublishedEndpoint.of("10.0.0.3", "c", "uc", null, null, true, false, false, List.of());
    PublishedEndpoint drainingHealthy =
        PublishedEndpoint.of("10.0.0.4", "d", "ud", null, null, false, true, true, List.of());
    PublishedEndpoint drainingUnhealthy =
        PublishedEndpoint.of("10.0.0.5", "e", "ue", null, null, true, false, true, List.of());

    List<EndpointSlice> slices =
        EndpointSliceDesired.build(
            target(100),
            List.of(available, down, panicPublishedDown, drainingHealthy, drainingUnhealthy),
            List.of());

    assertThat(slices).hasSize(1);
    List<EndpointConditions> c =
        slices.get(0).getEndpoints().stream().map(Endpoint::getConditions).toList();
    assertThat(c.get(0)).isEqualTo(new EndpointConditions(true, true, false));
    assertThat(c.get(1)).isEqualTo(new EndpointConditions(false, false, false));
    assertThat(c.get(2)).isEqualTo(new EndpointConditions(true, true, false));
    assertThat(c.get(3)).isEqualTo(new EndpointConditions(false, true, true));
    assertThat(c.get(4)).isEqualTo(new EndpointConditions(false, false, true));
  }

  @Test
  void carriesLabelsOwnerPortsTargetRefNodeAndZone() {
    EndpointSlice slice =
        EndpointSliceDesired.build(target(100), List.of(up("10.0.0.1")), List.of()).get(0);

    assertThat(slice.getMetadata().getName()).isEqualTo("web-vigil-0");
    assertThat(slice.getMetadata().getNamespace()).isEqualTo("shop");
    assertThat(slice.getMetadata().getLabels())
        .containsEntry("kubernetes.io/service-name", "web")
        .containsEntry("endpointslice.kubernetes.io/managed-by", "vigil.dev")
        .containsEntry("app", "web")
        .doesNotContainKey("service.kubernetes.io/headless");
    assertThat(slice.getMetadata().getOwnerReferences()).containsExactly(OWNER);
    assertThat(OWNER.getBlockOwnerDeletion()).isNull();
    assertThat(slice.getAddressType()).isEqualTo("IPv4");
    assertThat(slice.getPorts()).isEqualTo(PORTS);
    Endpoint e = slice.getEndpoints().get(0);
    assertThat(e.getTargetRef().getKind()).isEqualTo("Pod");
    assertThat(e.getTargetRef().getName()).isEqualTo("pod-10.0.0.1");
    assertThat(e.getNodeName()).isEqualTo("node-1");
    assertThat(e.getZone()).isEqualTo("zone-a");
    assertThat(e.getHints()).isNull();
  }

  @Test
  void aTargetHasNoTargetRefAndItsHostnameOnlyWhereThatIsOneDnsLabel() {
    List<PublishedEndpoint> targets =
        List.of(
            PublishedEndpoint.of(
                "10.0.0.1", "10.0.0.1", null, null, "z", true, true, false, List.of()),
            PublishedEndpoint.of(
                "10.0.0.2", "db/10.0.0.2", null, null, null, true, true, false, List.of()),
            PublishedEndpoint.of(
                "10.0.0.3",
                "db.example.com/10.0.0.3",
                null,
                null,
                null,
                true,
                true,
                false,
                List.of()));
    List<Endpoint> e =
        EndpointSliceDesired.build(target(100), targets, List.of()).get(0).getEndpoints();
    assertThat(e).allSatisfy(x -> assertThat(x.getTargetRef()).isNull());
    assertThat(e).extracting(Endpoint::getHostname).containsExactly(null, "db", null);
    assertThat(e.get(0).getZone()).isEqualTo("z");
  }

  @Test
  void marksHeadlessServicesAndWritesZoneHintsWhenAsked() {
    SliceTarget t = new SliceTarget("shop", "web", Map.of(), true, true, OWNER, PORTS, 100);
    EndpointSlice slice = EndpointSliceDesired.build(t, List.of(up("10.0.0.1")), List.of()).get(0);

    assertThat(slice.getMetadata().getLabels()).containsKey("service.kubernetes.io/headless");
    assertThat(slice.getEndpoints().get(0).getHints().getForZones())
        .extracting(z -> z.getName())
        .containsExactly("zone-a");
  }

  @Test
  void splitsTwoHundredFiftyEndpointsIntoThreeSlices() {
    List<PublishedEndpoint> all = endpoints(250);

    List<EndpointSlice> slices = EndpointSliceDesired.build(target(100), all, List.of());

    assertThat(slices)
        .extracting(s -> s.getMetadata().getName())
        .containsExactly("web-vigil-0", "web-vigil-1", "web-vigil-2");
    assertThat(slices).extracting(s -> s.getEndpoints().size()).containsExactly(100, 100, 50);
  }

  @Test
  void removingOneEndpointChangesOnlyItsSlice() {
    List<PublishedEndpoint> all = endpoints(250);
    List<EndpointSlice> before = EndpointSliceDesired.build(target(100), all, List.of());
    List<PublishedEndpoint> fewer = new ArrayList<>(all);
    fewer.remove(3);

    List<EndpointSlice> after = EndpointSliceDesired.build(target(100), fewer, before);

    assertThat(after).hasSize(3);
    assertThat(EndpointSliceWriter.sameContent(before.get(0), after.get(0))).isFalse();
    assertThat(EndpointSliceWriter.sameContent(before.get(1), after.get(1))).isTrue();
    assertThat(EndpointSliceWriter.sameContent(before.get(2), after.get(2))).isTrue();
  }

  @Test
  void aNewEndpointFillsTheFirstSliceWithRoom() {
    List<PublishedEndpoint> all = endpoints(250);
    List<PublishedEndpoint> fewer = new ArrayList<>(all);
    PublishedEndpoint removed = fewer.remove(3);
    List<EndpointSlice> before =
        EndpointSliceDesired.build(
            target(100), fewer, EndpointSliceDesired.build(target(100), all, List.of()));
    assertThat(before).extracting(s -> s.getEndpoints().size()).containsExactly(99, 100, 50);

    List<PublishedEndpoint> more = new ArrayList<>(fewer);
    more.add(up("10.9.9.9"));
    List<EndpointSlice> after = EndpointSliceDesired.build(target(100), more, before);

    assertThat(after).extracting(s -> s.getEndpoints().size()).containsExactly(100, 100, 50);
    assertThat(EndpointSliceWriter.sameContent(before.get(1), after.get(1))).isTrue();
    assertThat(EndpointSliceWriter.sameContent(before.get(2), after.get(2))).isTrue();
    assertThat(removed.ip()).isNotEqualTo("10.9.9.9");
  }

  @Test
  void sameInputGivesSameContent() {
    List<PublishedEndpoint> all = endpoints(130);
    List<EndpointSlice> first = EndpointSliceDesired.build(target(100), all, List.of());
    List<EndpointSlice> second = EndpointSliceDesired.build(target(100), all, first);

    assertThat(second).hasSameSizeAs(first);
    for (int i = 0; i < first.size(); i++) {
      assertThat(EndpointSliceWriter.sameContent(first.get(i), second.get(i))).isTrue();
    }
  }

  @Test
  void putsIpv6EndpointsInTheirOwnSlices() {
    List<EndpointSlice> slices =
        EndpointSliceDesired.build(target(100), List.of(up("10.0.0.1"), up("fd00::1")), List.of());

    assertThat(slices)
        .extracting(s -> s.getMetadata().getName() + "/" + s.getAddressType())
        .containsExactly("web-vigil-0/IPv4", "web-vigil-ipv6-0/IPv6");
  }

  @Test
  void writesNoSliceForAnEmptyPool() {
    assertThat(EndpointSliceDesired.build(target(100), List.of(), List.of())).isEmpty();
  }

  private static List<PublishedEndpoint> endpoints(int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> up(String.format("10.0.%d.%d", i / 200, 10 + i % 200)))
        .toList();
  }

  private static PublishedEndpoint on(String ip, int port) {
    return PublishedEndpoint.of(
        ip, "pod-" + ip, "uid-" + ip, "node-1", "zone-a", true, true, false, List.of(port));
  }

  private static Map<String, String> layout(List<EndpointSlice> slices) {
    Map<String, String> out = new java.util.TreeMap<>();
    for (EndpointSlice s : slices) {
      out.put(
          s.getMetadata().getName(),
          s.getPorts().stream().map(p -> p.getName() + ":" + p.getPort()).toList()
              + " "
              + s.getEndpoints().stream().map(e -> e.getAddresses().get(0)).toList());
    }
    return out;
  }

  @Test
  void aRolloutThatRenumbersTheContainerPortGetsOneSliceSetPerPortSet() {
    List<EndpointSlice> before =
        EndpointSliceDesired.build(
            target(100), List.of(on("10.0.0.1", 8080), on("10.0.0.2", 8080)), List.of());

    List<EndpointSlice> during =
        EndpointSliceDesired.build(
            target(100),
            List.of(
                on("10.0.0.1", 8080),
                on("10.0.0.2", 8080),
                on("10.0.0.3", 9090),
                on("10.0.0.4", 9090)),
            before);
    assertThat(layout(during))
        .containsExactlyEntriesOf(
            new java.util.TreeMap<>(
                Map.of(
                    "web-vigil-0", "[http:8080] [10.0.0.1, 10.0.0.2]",
                    "web-vigil-1", "[http:9090] [10.0.0.3, 10.0.0.4]")));
    assertThat(during.get(0)).as("the old slice is not rewritten").isEqualTo(before.get(0));

    List<EndpointSlice> after =
        EndpointSliceDesired.build(
            target(100), List.of(on("10.0.0.3", 9090), on("10.0.0.4", 9090)), during);
    assertThat(layout(after))
        .as("sticky: the new port set keeps its slice")
        .containsExactlyEntriesOf(Map.of("web-vigil-1", "[http:9090] [10.0.0.3, 10.0.0.4]"));
  }

  @Test
  void anEndpointMissingANamedPortIsPublishedWithTheOthersOnly() {
    List<EndpointPort> two =
        List.of(
            new EndpointPortBuilder().withName("http").withProtocol("TCP").withPort(8080).build(),
            new EndpointPortBuilder()
                .withName("metrics")
                .withProtocol("TCP")
                .withPort(9100)
                .build());
    SliceTarget target = new SliceTarget("shop", "web", Map.of(), false, false, OWNER, two, 100);
    PublishedEndpoint old =
        PublishedEndpoint.of(
            "10.0.0.1", "a", "ua", null, null, true, true, false, List.of(8080, 9100));
    PublishedEndpoint renamed =
        PublishedEndpoint.of(
            "10.0.0.2", "b", "ub", null, null, true, true, false, List.of(-1, 9100));

    assertThat(layout(EndpointSliceDesired.build(target, List.of(old, renamed), List.of())))
        .containsExactlyEntriesOf(
            new java.util.TreeMap<>(
                Map.of(
                    "web-vigil-0", "[http:8080, metrics:9100] [10.0.0.1]",
                    "web-vigil-1", "[metrics:9100] [10.0.0.2]")));
  }

  @Test
  void fillsOnlySlicesOfTheSamePortSet() {
    List<EndpointSlice> current =
        EndpointSliceDesired.build(
            target(2), List.of(on("10.0.0.1", 8080), on("10.0.0.9", 9090)), List.of());
    List<EndpointSlice> next =
        EndpointSliceDesired.build(
            target(2),
            List.of(on("10.0.0.1", 8080), on("10.0.0.9", 9090), on("10.0.0.5", 9090)),
            current);
    assertThat(layout(next))
        .containsExactlyEntriesOf(
            new java.util.TreeMap<>(
                Map.of(
                    "web-vigil-0", "[http:8080] [10.0.0.1]",
                    "web-vigil-1", "[http:9090] [10.0.0.5, 10.0.0.9]")));
  }
}
