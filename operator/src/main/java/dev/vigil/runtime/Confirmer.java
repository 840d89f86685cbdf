package dev.vigil.runtime;

import dev.vigil.health.Confirmation;
import dev.vigil.health.HealthSettings;
import io.vertx.core.Future;
import java.util.List;
import java.util.Map;

/**
 * The voters of this replica's pools (docs/design.md §8): how a pool's owner decides its Down
 * verdicts now, and asking the voters about them. Called on the pool's context; must not block.
 */
public interface Confirmer {
  /**
   * How the pool's Down verdicts decide now: ALONE when its policy has no quorum and this replica
   * is not Suspect, or when no voter is live in another zone and it is not Suspect; VOTE when a
   * voter is; FREEZE when this replica is Suspect and has no one to ask.
   */
  Confirmation mode(PoolKey pool, HealthSettings settings);

  /**
   * Asks the pool's voters about these backends, all at once (one batched request per voter); the
   * answers by backend id. A backend missing from the answer had every voter abstain. May complete
   * on any thread.
   */
  Future<Map<String, Votes>> ask(PoolKey pool, List<Member> backends);

  default boolean suspect() {
    return false;
  }

  /** What the voters answered on one backend: the zones of those that said Down, Up, nothing. */
  record Votes(List<String> down, List<String> up, List<String> abstained) {
    public static final Votes NONE = new Votes(List.of(), List.of(), List.of());

    public Votes {
      down = List.copyOf(down);
      up = List.copyOf(up);
      abstained = List.copyOf(abstained);
    }
  }

  /** Every owner decides alone: today's behaviour, and a single replica's. */
  Confirmer ALONE =
      new Confirmer() {
        @Override
        public Confirmation mode(PoolKey pool, HealthSettings settings) {
          return Confirmation.ALONE;
        }

        @Override
        public Future<Map<String, Votes>> ask(PoolKey pool, List<Member> backends) {
          return Future.succeededFuture(Map.of());
        }
      };
}
