package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The ring's live checkers, their zones and Suspect flags, from shard Leases. */
class LiveCheckersTest {
  private static final long NOW = 1_000_000_000_000L;

  private static Lease lease(
      String shard, String holder, long renewedAgoMs, String... annotations) {
    Map<String, String> map = new HashMap<>();
    for (int i = 0; i < annotations.length; i += 2) {
      map.put(annotations[i], annotations[i + 1]);
    }
    return new LeaseBuilder()
        .withNewMetadata()
        .withName(ShardConfig.LEASE_PREFIX + shard)
        .withAnnotations(annotations.length == 0 ? null : map)
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity(holder)
        .withLeaseDurationSeconds(15)
        .withRenewTime(ShardLease.time(NOW - renewedAgoMs))
        .endSpec()
        .build();
  }

  private static Lease live(String shard, String zone, String share) {
    return lease(shard, shard, 1_000, CheckerReport.ZONE, zone, CheckerReport.FAILING_SHARE, share);
  }

  @Test
  void listsOnlyLiveLeasesWithTheirZonesByName() {
    List<Voters.Checker> checkers =
        LiveCheckers.of(
            List.of(
                live("c", "eu-1c", "0.000"),
                live("a", "eu-1a", "0.010"),
                lease("expired", "expired", 15_000, CheckerReport.ZONE, "eu-1b"),
                lease("fenced", "fenced-by-a", 1_000, CheckerReport.ZONE, "eu-1b"),
                lease("released", null, 1_000)),
            NOW);
    assertThat(checkers)
        .containsExactly(
            new Voters.Checker("a", "eu-1a", false), new Voters.Checker("c", "eu-1c", false));
  }

  @Test
  void aReplicaFailingFarMoreThanItsPeersIsSuspect() {
    List<Voters.Checker> checkers =
        LiveCheckers.of(
            List.of(
                live("a", "z1", "0.600"),
                live("b", "z2", "0.100"),
                live("c", "z3", "0.150"),
                live("d", "z1", "0.200")),
            NOW);
    // a: 0.6 >= 0.30 and >= 3 x median(0.1, 0.15, 0.2) = 0.45; the others are under 0.30
    assertThat(checkers)
        .filteredOn(Voters.Checker::suspect)
        .extracting("name")
        .containsExactly("a");
  }

  @Test
  void aShareAtThreeTimesThePeersMedianIsSuspectAndJustUnderIsNot() {
    assertThat(
            LiveCheckers.of(List.of(live("a", "z1", "0.300"), live("b", "z2", "0.100")), NOW)
                .get(0)
                .suspect())
        .isTrue();
    assertThat(
            LiveCheckers.of(List.of(live("a", "z1", "0.300"), live("b", "z2", "0.101")), NOW)
                .get(0)
                .suspect())
        .isFalse();
  }

  @Test
  void everyReplicaFailingAlikeDoubtsNone() {
    assertThat(
            LiveCheckers.of(
                List.of(
                    live("a", "z1", "0.900"), live("b", "z2", "0.800"), live("c", "z3", "1.000")),
                NOW))
        .noneMatch(Voters.Checker::suspect);
  }

  @Test
  void aLoneReplicaIsNeverSuspect() {
    assertThat(LiveCheckers.of(List.of(live("a", "z1", "1.000")), NOW))
        .containsExactly(new Voters.Checker("a", "z1", false));
  }

  @Test
  void aLeaseWithoutTheAnnotationsIsZoneUnknownAndShareZero() {
    List<Voters.Checker> checkers =
        LiveCheckers.of(
            List.of(
                lease("old", "old", 1_000),
                live("a", "z1", "0.900"),
                lease("bad", "bad", 1_000, CheckerReport.FAILING_SHARE, "lots")),
            NOW);
    // "old" and "bad" count as share 0: a at 0.9 is Suspect against a median of 0
    assertThat(checkers)
        .containsExactly(
            new Voters.Checker("a", "z1", true),
            new Voters.Checker("bad", "", false),
            new Voters.Checker("old", "", false));
  }
}
