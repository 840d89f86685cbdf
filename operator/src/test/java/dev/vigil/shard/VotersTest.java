package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.shard.Voters.Checker;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** docs/design.md §8 voters: per other zone, the heaviest non-Suspect replica for the pool. */
class VotersTest {
  private static final Checker OWNER = new Checker("vigil-a-0", "zone-a", false);

  private static List<Checker> cluster() {
    List<Checker> all = new ArrayList<>();
    for (String zone : List.of("zone-a", "zone-b", "zone-c", "zone-d")) {
      for (int i = 0; i < 3; i++) {
        all.add(new Checker("vigil-" + zone.charAt(5) + "-" + i, zone, false));
      }
    }
    return all;
  }

  @Test
  void onePerOtherZoneTheHeaviestForThePoolWhateverTheOrderOfTheLeases() {
    List<Checker> all = cluster();
    Random r = new Random(7);
    for (int pool = 0; pool < 200; pool++) {
      String uid = "uid-" + pool;
      List<Checker> voters = Voters.confirmers(uid, OWNER, all, 3);
      assertThat(voters).hasSize(3);
      Set<String> zones = new HashSet<>();
      long poolHash = Rendezvous.hash(uid);
      for (Checker v : voters) {
        assertThat(v.zone()).isNotEqualTo("zone-a");
        assertThat(zones.add(v.zone())).isTrue();
        for (Checker other : all) {
          if (other.zone().equals(v.zone())) {
            assertThat(
                    Long.compareUnsigned(
                        Rendezvous.weight(poolHash, Rendezvous.hash(v.name())),
                        Rendezvous.weight(poolHash, Rendezvous.hash(other.name()))))
                .as("%s weighs most in its zone for %s", v.name(), uid)
                .isGreaterThanOrEqualTo(0);
          }
        }
      }
      List<Checker> shuffled = new ArrayList<>(all);
      Collections.shuffle(shuffled, r);
      assertThat(Voters.confirmers(uid, OWNER, shuffled, 3)).isEqualTo(voters);
      assertThat(Voters.confirmers(uid, OWNER, all, 2)).isEqualTo(voters.subList(0, 2));
    }
  }

  @Test
  void suspectsAndReplicasOfNoZoneNeverVoteAndTheirZoneFallsToTheNextReplica() {
    String uid = "uid-1";
    Checker first = Voters.confirmers(uid, OWNER, cluster(), 3).get(0);
    List<Checker> changed = new ArrayList<>();
    for (Checker c : cluster()) {
      changed.add(c.name().equals(first.name()) ? new Checker(c.name(), c.zone(), true) : c);
    }
    changed.add(new Checker("vigil-nozone", "", false));
    List<Checker> voters = Voters.confirmers(uid, OWNER, changed, 3);
    assertThat(voters).extracting(Checker::name).doesNotContain(first.name(), "vigil-nozone");
    assertThat(voters).extracting(Checker::zone).contains(first.zone());
  }

  @Test
  void noOtherZoneNoVoters() {
    List<Checker> sameZone =
        List.of(OWNER, new Checker("vigil-a-1", "zone-a", false), new Checker("x", "", false));
    assertThat(Voters.confirmers("uid", OWNER, sameZone, 2)).isEmpty();
  }
}
