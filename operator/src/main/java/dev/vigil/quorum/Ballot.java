package dev.vigil.quorum;

import dev.vigil.probe.ConfirmingProbe.Vote;
import java.util.List;
import java.util.Map;

/**
 * What an owner asks a voter and what the voter answers (docs/design.md §8 rule 1), as JSON on
 * {@code POST /v1/confirmations}.
 */
public final class Ballot {
  private Ballot() {}

  /**
   * One pool's backends the owner's verdict took Down: the voter probes each with the pool's check
   * (which it resolves itself from the pool's HealthPolicy) and answers within {@code timeoutMs}.
   */
  public record Question(String namespace, String pool, long timeoutMs, List<Backend> backends) {
    public Question {
      backends = backends == null ? List.of() : List.copyOf(backends);
    }
  }

  /** A backend to probe: its id in the pool, and where its active check goes. */
  public record Backend(String id, String ip, int port) {}

  /** The voter's zone and its vote per backend id (a backend it did not decide on: ABSTAIN). */
  public record Answer(String zone, Map<String, Vote> votes) {
    public Answer {
      votes = votes == null ? Map.of() : Map.copyOf(votes);
    }
  }
}
