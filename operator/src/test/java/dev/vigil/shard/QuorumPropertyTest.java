package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.ActiveState;
import dev.vigil.health.Backend;
import dev.vigil.health.Confirmation;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.PoolHealth;
import dev.vigil.health.Transition;
import dev.vigil.shard.Voters.Checker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Checker quorum over random partitions (docs/design.md §8): random zones and replicas, some dead,
 * some with a broken network (every backend looks down from there), some lossy; random backends,
 * some really dead. Each replica's failing share decides whether it is Suspect ({@link SelfDoubt});
 * the owner's Down verdicts go to the voters {@link Voters} names, each answers what it sees (or
 * abstains when unreachable), and the real decision core ({@link PoolHealth#onVotes}) decides.
 * Every Down is checked against what the voters saw, counted here independently.
 */
class QuorumPropertyTest {
  private static final int WORLDS = 3_000;
  private static final int BACKENDS = 20;

  private record Replica(
      String name, String zone, boolean alive, boolean broken, boolean lossy, boolean reachable) {}

  @Test
  void neverADownThatTheDecidingVotersDidNotSee() {
    long seed = Long.getLong("vigil.quorum.seed", System.nanoTime());
    System.out.println("QuorumPropertyTest: seed " + seed);
    Random r = new Random(seed);
    Totals totals = new Totals();
    for (int world = 0; world < WORLDS; world++) {
      playWorld(new Random(r.nextLong()), totals, seed, world);
    }
    System.out.println("QuorumPropertyTest: " + totals);
    // floors: the partitions the rule exists for happened
    assertThat(totals.brokenOwnersOutvoted).as("a broken owner outvoted").isGreaterThan(200);
    assertThat(totals.confirmedKills).as("real kills confirmed").isGreaterThan(1_000);
    assertThat(totals.suspectOwners).as("suspect owners").isGreaterThan(100);
    assertThat(totals.heldBySuspectAlone).as("Downs held by a lone suspect").isGreaterThan(20);
    assertThat(totals.decidedAlone).as("owners with no voter, deciding alone").isGreaterThan(100);
  }

  private static final class Totals {
    int brokenOwnersOutvoted;
    int confirmedKills;
    int suspectOwners;
    int heldBySuspectAlone;
    int decidedAlone;

    @Override
    public String toString() {
      return "broken owners outvoted "
          + brokenOwnersOutvoted
          + ", real kills confirmed "
          + confirmedKills
          + ", suspect owners "
          + suspectOwners
          + ", Downs held by a lone suspect "
          + heldBySuspectAlone
          + ", owners deciding alone "
          + decidedAlone;
    }
  }

  private static void playWorld(Random r, Totals totals, long seed, int world) {
    int zones = 1 + r.nextInt(4);
    List<Replica> replicas = new ArrayList<>();
    for (int z = 0; z < zones; z++) {
      int n = 1 + r.nextInt(3);
      for (int i = 0; i < n; i++) {
        replicas.add(
            new Replica(
                "vigil-" + z + "-" + i,
                r.nextInt(15) == 0 ? "" : "zone-" + z,
                r.nextInt(10) != 0,
                r.nextInt(6) == 0,
                r.nextInt(8) == 0,
                r.nextInt(10) != 0));
      }
    }
    List<Replica> live = replicas.stream().filter(Replica::alive).toList();
    if (live.isEmpty()) {
      return;
    }
    boolean[] backendAlive = new boolean[BACKENDS];
    for (int b = 0; b < BACKENDS; b++) {
      backendAlive[b] = r.nextInt(5) != 0;
    }
    Map<String, boolean[]> sees = new HashMap<>();
    for (Replica c : live) {
      boolean[] up = new boolean[BACKENDS];
      for (int b = 0; b < BACKENDS; b++) {
        up[b] = backendAlive[b] && !c.broken() && !(c.lossy() && r.nextInt(3) == 0);
      }
      sees.put(c.name(), up);
    }
    Map<String, Boolean> suspect = suspects(live, sees);
    List<Checker> checkers =
        live.stream().map(c -> new Checker(c.name(), c.zone(), suspect.get(c.name()))).toList();
    Checker owner = checkers.get(r.nextInt(checkers.size()));
    boolean quorumOn = r.nextBoolean();
    int confirmers = quorumOn ? 1 + r.nextInt(3) : 2;
    int downPercent = quorumOn ? new int[] {50, 50, 34, 66}[r.nextInt(4)] : 50;
    String uid = "uid-" + r.nextLong();
    List<Checker> voters = Voters.confirmers(uid, owner, checkers, confirmers);
    String where = "seed " + seed + " world " + world + " owner " + owner + " voters " + voters;
    checkVoters(voters, owner, confirmers, where);
    Confirmation mode = mode(quorumOn || owner.suspect(), owner.suspect(), voters, downPercent);
    if (owner.suspect()) {
      totals.suspectOwners++;
    }
    if (mode == Confirmation.ALONE) {
      totals.decidedAlone++;
    }
    Map<String, Replica> byName = new HashMap<>();
    live.forEach(c -> byName.put(c.name(), c));
    for (int b = 0; b < BACKENDS; b++) {
      if (sees.get(owner.name())[b]) {
        continue; // the owner's verdict is Up: nothing to confirm
      }
      decide(b, owner, voters, byName, sees, backendAlive[b], mode, totals, where);
    }
  }

  /** Every replica's failing share, and Suspect by {@link SelfDoubt} against the others. */
  private static Map<String, Boolean> suspects(List<Replica> live, Map<String, boolean[]> sees) {
    Map<String, Double> share = new HashMap<>();
    for (Replica c : live) {
      int failing = 0;
      for (boolean up : sees.get(c.name())) {
        failing += up ? 0 : 1;
      }
      share.put(c.name(), failing / (double) BACKENDS);
    }
    Map<String, Boolean> suspect = new HashMap<>();
    for (Replica c : live) {
      List<Double> peers = new ArrayList<>();
      live.stream().filter(o -> o != c).forEach(o -> peers.add(share.get(o.name())));
      suspect.put(c.name(), SelfDoubt.suspect(share.get(c.name()), peers));
    }
    return suspect;
  }

  private static void checkVoters(List<Checker> voters, Checker owner, int most, String where) {
    Set<String> zones = new HashSet<>();
    assertThat(voters.size()).as(where).isLessThanOrEqualTo(most);
    for (Checker v : voters) {
      assertThat(v.suspect()).as("a Suspect voter: " + where).isFalse();
      assertThat(v.zone()).as("a voter of no zone: " + where).isNotEmpty();
      assertThat(v.zone()).as("a voter in the owner's zone: " + where).isNotEqualTo(owner.zone());
      assertThat(zones.add(v.zone())).as("two voters of one zone: " + where).isTrue();
    }
  }

  /** docs/design.md §8: the mode the owner's runtime sets. */
  private static Confirmation mode(
      boolean confirm, boolean suspect, List<Checker> voters, int downPercent) {
    if (!confirm) {
      return Confirmation.ALONE;
    }
    if (voters.isEmpty()) {
      return suspect ? Confirmation.FREEZE : Confirmation.ALONE;
    }
    return Confirmation.vote(suspect ? Confirmation.DEFAULT_DOWN_PERCENT : downPercent);
  }

  private static void decide(
      int b,
      Checker owner,
      List<Checker> voters,
      Map<String, Replica> byName,
      Map<String, boolean[]> sees,
      boolean reallyAlive,
      Confirmation mode,
      Totals totals,
      String where) {
    PoolHealth pool = new PoolHealth(HealthSettings.builder().rise(1).fall(1).build());
    pool.confirmation(mode);
    Backend backend = pool.add("b" + b);
    pool.restore(backend, ActiveState.UP, 0, 0, 1_000);
    Transition t = pool.onProbeResult(backend, false, 2_000);
    int down = 0;
    int up = 0;
    if (t == Transition.CONFIRM) {
      for (Checker v : voters) {
        if (!byName.get(v.name()).reachable()) {
          continue; // abstains
        }
        if (sees.get(v.name())[b]) {
          up++;
        } else {
          down++;
        }
      }
      pool.onVotes(backend, down, up, 3_000);
    }
    boolean isDown = backend.state() == ActiveState.DOWN;
    String what = where + " backend b" + b + " mode " + mode + " down " + down + " up " + up;
    if (mode.mode() == Confirmation.Mode.FREEZE) {
      assertThat(isDown).as("a lone suspect took a backend down: " + what).isFalse();
      totals.heldBySuspectAlone++;
      return;
    }
    if (mode == Confirmation.ALONE) {
      assertThat(isDown).as("an owner deciding alone: " + what).isTrue();
      return;
    }
    // the rule, counted here: the owner plus every voter that answered
    boolean majority = (1 + down) * 100 > mode.downPercent() * (1 + down + up);
    assertThat(isDown).as("the vote rule: " + what).isEqualTo(majority);
    if (isDown && !owner.suspect()) {
      // every deciding voter is live and not Suspect: more than downPercent of them saw it down
      assertThat((1 + down) * 100).as(what).isGreaterThan(mode.downPercent() * (1 + down + up));
    }
    if (isDown && up >= 1 && mode.downPercent() >= 50) {
      assertThat(down)
          .as("a Down against a voter's Up needs another voter's Down: " + what)
          .isGreaterThanOrEqualTo(1);
    }
    if (!isDown && byName.get(owner.name()).broken()) {
      totals.brokenOwnersOutvoted++;
    }
    if (isDown && !reallyAlive) {
      totals.confirmedKills++;
    }
    assertThat(isDown && up >= 1 && down == 0 && mode.downPercent() >= 50)
        .as("an owner took a backend out against every voter that answered: " + what)
        .isFalse();
  }
}
