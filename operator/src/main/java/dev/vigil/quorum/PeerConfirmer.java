package dev.vigil.quorum;

import dev.vigil.health.Confirmation;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.QuorumSettings;
import dev.vigil.peer.PeerClient;
import dev.vigil.probe.ConfirmingProbe.Vote;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import dev.vigil.shard.ShardRing;
import dev.vigil.shard.Voters;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The owner's side of checker quorum between replicas (docs/design.md §8). The mode of a pool: a
 * policy with {@code quorum}, or any pool while this replica is Suspect, votes when a live,
 * non-Suspect voter with an address is in another zone; a Suspect replica without one freezes its
 * Downs; otherwise the owner decides alone. A question goes to each voter ({@link
 * Voters#confirmers}) at once; a voter that fails, refuses or does not answer within the quorum's
 * timeout (and a little slack for the trip) abstains on every backend asked.
 *
 * <p>The ring's live checkers are read at most every {@value #REFRESH_MS} ms (the mode is asked
 * before every probe result).
 */
public final class PeerConfirmer implements Confirmer {
  static final long REFRESH_MS = 500;

  /** What the answer may take beyond the quorum's timeout: the trip and the voter's last probe. */
  static final long SLACK_MS = 2_000;

  private record Ring(long at, List<Voters.Checker> live, boolean suspect) {}

  private final Voters.Checker self;
  private final Supplier<List<Voters.Checker>> checkers;
  private final BooleanSupplier selfSuspect;
  private final Function<PoolKey, String> uids;
  private final PeerClient client;
  private final LongSupplier clock;
  private volatile Ring ring = new Ring(Long.MIN_VALUE, List.of(), false);

  /**
   * @param self this replica: its shard name and zone
   * @param checkers the ring's live checkers now ({@code ShardRing::checkers})
   * @param selfSuspect whether this replica is Suspect now ({@code ShardRing::selfSuspect})
   * @param uids a pool's UID (what the voters are ranked by), "" when unknown
   */
  PeerConfirmer(
      Voters.Checker self,
      Supplier<List<Voters.Checker>> checkers,
      BooleanSupplier selfSuspect,
      Function<PoolKey, String> uids,
      PeerClient client,
      LongSupplier clock) {
    this.self = self;
    this.checkers = checkers;
    this.selfSuspect = selfSuspect;
    this.uids = uids;
    this.client = client;
    this.clock = clock;
  }

  /** The confirmer of a sharded replica; it asks through {@code client}. */
  public static PeerConfirmer create(
      PeerClient client,
      Voters.Checker self,
      ShardRing ring,
      Function<PoolKey, String> uids,
      LongSupplier clock) {
    return new PeerConfirmer(self, ring::checkers, ring::selfSuspect, uids, client, clock);
  }

  @Override
  public Confirmation mode(PoolKey pool, HealthSettings settings) {
    Ring now = ring();
    QuorumSettings quorum = quorum(settings, now.suspect());
    if (quorum == null) {
      return Confirmation.ALONE;
    }
    if (voters(pool, quorum, now).isEmpty()) {
      return now.suspect() ? Confirmation.FREEZE : Confirmation.ALONE;
    }
    return quorum.confirmation();
  }

  @Override
  public boolean suspect() {
    return ring().suspect();
  }

  @Override
  public Future<Map<String, Votes>> ask(
      PoolKey pool, HealthSettings settings, List<Member> backends) {
    Ring now = ring();
    QuorumSettings quorum = settings.quorumOn() ? settings.quorum() : settings.suspectQuorum();
    List<Voters.Checker> voters = voters(pool, quorum, now);
    Ballot.Question question =
        new Ballot.Question(
            pool.namespace(),
            pool.name(),
            quorum.timeoutMs(),
            backends.stream().map(m -> new Ballot.Backend(m.id(), m.ip(), m.probePort())).toList());
    List<Future<Ballot.Answer>> answers = new ArrayList<>(voters.size());
    for (Voters.Checker voter : voters) {
      answers.add(ask(voter.address(), question, quorum.timeoutMs() + SLACK_MS));
    }
    List<String> asked = backends.stream().map(Member::id).toList();
    return Future.join(answers)
        .transform(done -> Future.succeededFuture(tally(asked, voters, answers)));
  }

  /** One voter's answer; fails when it gives none within {@code waitMs}. */
  Future<Ballot.Answer> ask(String address, Ballot.Question question, long waitMs) {
    return client.post(address, VoterEndpoint.PATH, question, Ballot.Answer.class, waitMs);
  }

  /** The votes on each backend asked, each voter named by the zone on its Lease. */
  static Map<String, Votes> tally(
      List<String> asked, List<Voters.Checker> voters, List<Future<Ballot.Answer>> answers) {
    Map<String, Votes> tallied = new HashMap<>();
    for (String id : asked) {
      List<String> down = new ArrayList<>();
      List<String> up = new ArrayList<>();
      List<String> abstained = new ArrayList<>();
      for (int i = 0; i < voters.size(); i++) {
        Future<Ballot.Answer> a = answers.get(i);
        Vote v = a.succeeded() ? a.result().votes().getOrDefault(id, Vote.ABSTAIN) : Vote.ABSTAIN;
        (v == Vote.DOWN ? down : v == Vote.UP ? up : abstained).add(voters.get(i).zone());
      }
      tallied.put(id, new Votes(down, up, abstained));
    }
    return tallied;
  }

  /** The quorum in force: the policy's, a Suspect's default, or none (decide alone). */
  private static QuorumSettings quorum(HealthSettings settings, boolean suspect) {
    if (settings.quorumOn()) {
      return settings.quorum();
    }
    return suspect ? settings.suspectQuorum() : null;
  }

  private List<Voters.Checker> voters(PoolKey pool, QuorumSettings quorum, Ring now) {
    Voters.Checker owner = self;
    List<Voters.Checker> reachable = new ArrayList<>(now.live().size());
    for (Voters.Checker c : now.live()) {
      if (c.name().equals(self.name())) {
        owner = c;
      } else if (!c.address().isEmpty()) {
        reachable.add(c);
      }
    }
    String uid = uids.apply(pool);
    return Voters.confirmers(
        uid == null || uid.isEmpty() ? pool.toString() : uid,
        owner,
        reachable,
        quorum.confirmers());
  }

  private Ring ring() {
    Ring r = ring;
    long now = clock.getAsLong();
    if (now - r.at() < REFRESH_MS && r.at() != Long.MIN_VALUE) {
      return r;
    }
    r = new Ring(now, checkers.get(), selfSuspect.getAsBoolean());
    ring = r;
    return r;
  }
}
