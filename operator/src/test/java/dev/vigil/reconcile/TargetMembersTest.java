package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPoolSpec;
import dev.vigil.api.v1alpha1.BackendTarget;
import dev.vigil.api.v1alpha1.PoolPort;
import dev.vigil.health.AdminState;
import dev.vigil.runtime.Member;
import dev.vigil.targets.DnsAnswer;
import dev.vigil.targets.ResolvedName;
import dev.vigil.targets.TargetNetworks;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetMembersTest {
  private static final List<PoolPort> PORTS =
      List.of(new PoolPort("http", 80, new IntOrString(8080)), new PoolPort("admin", 9000, null));

  private static BackendTarget zoned(String address, String zone) {
    BackendTarget t = BackendTarget.address(address);
    t.setZone(zone);
    return t;
  }

  @Test
  void addressesAndEveryAnswerOfAHostnameAreMembersWithTheNumericPorts() {
    ResolvedName db =
        ResolvedName.pending("db.example.com")
            .answered(DnsAnswer.of(List.of("10.0.0.9", "10.0.0.8"), 30), 0);
    List<Member> members =
        TargetMembers.members(
            List.of(zoned("10.0.0.1", "a"), BackendTarget.hostname("db.example.com")),
            PORTS,
            new IntOrString("admin"),
            Map.of("db.example.com", db),
            Map.of("db.example.com", AdminState.DRAIN, "10.0.0.1", AdminState.MAINT),
            TargetNetworks.NONE);
    assertThat(members)
        .extracting(Member::id)
        .containsExactly("10.0.0.1", "db.example.com/10.0.0.8", "db.example.com/10.0.0.9");
    Member vm = members.get(0);
    assertThat(vm.pod()).isFalse();
    assertThat(vm.nodeName()).isNull();
    assertThat(vm.zone()).isEqualTo("a");
    assertThat(vm.ports()).containsExactly(8080, 9000);
    assertThat(vm.probePort()).isEqualTo(9000);
    assertThat(vm.admin()).isEqualTo(AdminState.MAINT);
    assertThat(members.get(1).admin()).isEqualTo(AdminState.DRAIN);
    assertThat(members.get(1).note()).isNull();
  }

  @Test
  void anAddressListedTwiceIsOneBackendAndAFailingNameNotesWhy() {
    ResolvedName db =
        ResolvedName.pending("db")
            .answered(DnsAnswer.of(List.of("10.0.0.1", "10.0.0.2"), 30), 0)
            .failed("NXDOMAIN", 1_000);
    List<Member> members =
        TargetMembers.members(
            List.of(BackendTarget.address("10.0.0.1"), BackendTarget.hostname("db")),
            PORTS,
            null,
            Map.of("db", db),
            Map.of(),
            TargetNetworks.NONE);
    assertThat(members).extracting(Member::ip).containsExactly("10.0.0.1", "10.0.0.2");
    assertThat(members.get(1).note()).contains("db does not resolve (NXDOMAIN)");
    assertThat(members.get(0).probePort()).isEqualTo(8080);
  }

  @Test
  void refusedNetworksAreNoBackendAndAStaticOneIsNamed() {
    TargetNetworks refused = TargetNetworks.parse(null);
    ResolvedName meta =
        ResolvedName.pending("meta")
            .answered(DnsAnswer.of(List.of("169.254.169.254", "10.0.0.5"), 30), 0);
    List<Member> members =
        TargetMembers.members(
            List.of(BackendTarget.address("127.0.0.1"), BackendTarget.hostname("meta")),
            PORTS,
            null,
            Map.of("meta", meta),
            Map.of(),
            refused);
    assertThat(members).extracting(Member::ip).containsExactly("10.0.0.5");
    assertThat(TargetMembers.refusedAnswers(Map.of("meta", meta), refused))
        .singleElement()
        .asString()
        .contains("meta answered 169.254.169.254", "--refuse-target-networks");
    BackendPoolSpec spec = new BackendPoolSpec();
    spec.setPorts(PORTS);
    spec.setTargets(
        List.of(BackendTarget.address("10.0.0.1"), BackendTarget.address("::ffff:127.0.0.1")));
    assertThat(TargetMembers.invalid(spec, null, refused))
        .startsWith(
            "spec.targets[1].address ::ffff:127.0.0.1 is in a network the operator refuses");
  }

  @Test
  void invalidSpecsAreNamedByField() {
    BackendPoolSpec spec = new BackendPoolSpec();
    spec.setPorts(PORTS);
    assertThat(TargetMembers.invalid(spec, null, TargetNetworks.NONE))
        .isEqualTo("a pool has exactly one of spec.selector and spec.targets");
    spec.setSelector(new LabelSelector());
    assertThat(TargetMembers.invalid(spec, null, TargetNetworks.NONE)).isNull();
    spec.setTargets(List.of(BackendTarget.address("10.0.0.1")));
    assertThat(TargetMembers.invalid(spec, null, TargetNetworks.NONE))
        .contains("exactly one of spec.selector");
    spec.setSelector(null);
    assertThat(TargetMembers.invalid(spec, null, TargetNetworks.NONE)).isNull();
    spec.setTargets(List.of(BackendTarget.address("10.0.0.1"), BackendTarget.address("db.local")));
    assertThat(TargetMembers.invalid(spec, null, TargetNetworks.NONE))
        .isEqualTo("spec.targets[1].address 'db.local' is not an IPv4 or IPv6 address");
    spec.setTargets(List.of(BackendTarget.address("::1")));
    spec.setPorts(List.of(new PoolPort("http", 80, new IntOrString("web"))));
    assertThat(TargetMembers.invalid(spec, null, TargetNetworks.NONE))
        .startsWith("spec.ports[0].targetPort must be a number");
    spec.setPorts(PORTS);
    assertThat(TargetMembers.invalid(spec, new IntOrString("grpc"), TargetNetworks.NONE))
        .contains("active.port grpc names no spec.ports[].name");
  }
}
